// DecodePlan and run with no GPU: the choice and its overrides, the workspace layout of each kind
// of split, and every refusal (a status with a message, before any CUDA call). The GPU half is
// gpu_test_decode_plan.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "api/decode_plan.h"

namespace {

constexpr int kH200Sms = 132;

// Llama-3-8B's family, which configs/tiles/ci.json compiles (bf16, d128, group 4, contiguous).
mha::DecodePlanOptions llama(int batch, int max_keys, const std::string& split = "") {
  mha::DecodePlanOptions o;
  o.shape.batch = batch;
  o.shape.max_keys = max_keys;
  o.shape.heads = 32;
  o.shape.kv_heads = 8;
  o.shape.depth = 128;
  o.split = split;
  o.sm_count = kH200Sms;
  return o;
}

mha::DecodePlan made(const mha::DecodePlanOptions& o) {
  mha::DecodePlan plan;
  const mha::DecodeStatus s = mha::DecodePlan::make(o, &plan);
  EXPECT_TRUE(s.ok()) << s.message;
  return plan;
}

size_t partial_bytes(size_t rows, int depth) { return rows * (size_t(depth) + 2) * sizeof(float); }

TEST(DecodePlan, ChoosesACompiledKernelThatComputesTheShape) {
  const mha::DecodePlan plan = made(llama(4, 8192));
  EXPECT_TRUE(mha::kernel_computes(plan.kernel(), plan.shape()));
  EXPECT_FALSE(plan.reason().empty());
  EXPECT_FALSE(plan.needs_lengths());
}

TEST(DecodePlan, FixedSplitsSizeTheirPartials) {
  const mha::DecodePlan four = made(llama(3, 4096, "4"));
  EXPECT_EQ(four.split(), "4");
  EXPECT_EQ(four.workspace_bytes(), partial_bytes(3u * 32 * 4, 128));
  EXPECT_EQ(made(llama(3, 4096, "1")).workspace_bytes(), 0u);
  // A cluster keeps its partials in distributed shared memory.
  const mha::DecodePlan cluster = made(llama(3, 4096, "cluster4"));
  EXPECT_EQ(cluster.split(), "cluster4");
  EXPECT_EQ(cluster.workspace_bytes(), 0u);
}

TEST(DecodePlan, SeveralQueryTokensTakeAMultiTokenKernelAndSizeEveryTokensPartials) {
  // configs/tiles/ci.json compiles a multi-token causal kernel of Llama-3-8B's family.
  mha::DecodePlanOptions o = llama(3, 4096, "4");
  o.shape.mask = "causal";
  o.shape.q_len = 4;
  const mha::DecodePlan plan = made(o);
  EXPECT_TRUE(plan.kernel().traits.multi_token) << plan.kernel().name;
  EXPECT_EQ(plan.workspace_bytes(), partial_bytes(3u * 4 * 32 * 4, 128));
  o.shape.q_len = 1;  // one token: never the multi-token kernel (the build has no causal other)
  mha::DecodePlan single;
  EXPECT_EQ(mha::DecodePlan::make(o, &single).code, mha::DecodeStatusCode::kNotCompiled);
  o.shape.q_len = 17;
  mha::DecodePlan refused;
  const mha::DecodeStatus s = mha::DecodePlan::make(o, &refused);
  EXPECT_EQ(s.code, mha::DecodeStatusCode::kInvalidArgument);
  EXPECT_NE(s.message.find("q_len"), std::string::npos) << s.message;
}

TEST(DecodePlan, SplitPlansHoldTheirWorkListAndPartials) {
  const mha::DecodePlan plan = made(llama(8, 70000, "plan2x128"));
  EXPECT_TRUE(plan.needs_lengths());
  EXPECT_EQ(plan.split(), "plan2x128");
  ASSERT_GE(plan.plan_capacity(), 8);
  const size_t list =
      sizeof(mha::WorkItem) * size_t(plan.plan_capacity()) + 16 + sizeof(mha::SeqSplit) * 8;
  EXPECT_GE(plan.workspace_bytes(), list + partial_bytes(size_t(plan.plan_capacity()) * 32, 128));
  EXPECT_EQ(plan.workspace_bytes() % 16, 0u);
}

TEST(DecodePlan, RaggedShapesWithoutAnEntryTakeTheDefaultPlan) {
  mha::DecodePlanOptions o = llama(8, 70000);
  o.shape.ragged = true;
  o.sm_count = 7;  // no table was measured on this GPU
  const mha::DecodePlan plan = made(o);
  EXPECT_TRUE(plan.needs_lengths()) << plan.reason();
  EXPECT_EQ(plan.split(), "plan2x128");
}

TEST(DecodePlan, TheCallersKernelAndSplitWin) {
  const std::string name = mha::kernel_registry().front().name;
  mha::DecodePlanOptions o = llama(2, 1000, "3");
  const mha::KernelTraits& t = mha::kernel_registry().front().traits;
  o.shape.dtype = t.dtype;
  o.shape.out_dtype = t.out_dtype;
  o.shape.kv_dtype = t.kv_dtype == t.dtype ? "" : t.kv_dtype;
  o.shape.soft_cap = t.soft_cap;
  o.shape.kv = t.kv;
  o.shape.mask = t.mask;
  o.shape.has_sink = t.has_sink;
  o.shape.depth = t.depth;
  o.shape.heads = 8 * t.group;
  o.page_size = 16;
  o.window = o.chunk = 64;
  o.kernel = name;
  const mha::DecodePlan plan = made(o);
  EXPECT_EQ(plan.kernel().name, name);
  EXPECT_EQ(plan.split_code(), 3);
  EXPECT_NE(plan.reason().find("caller"), std::string::npos);
}

void expect_refused(const mha::DecodePlanOptions& o, mha::DecodeStatusCode code,
                    const std::string& says) {
  mha::DecodePlan plan;
  const mha::DecodeStatus s = mha::DecodePlan::make(o, &plan);
  EXPECT_EQ(s.code, code) << s.message;
  EXPECT_NE(s.message.find(says), std::string::npos) << s.message;
}

TEST(DecodePlan, RefusesWhatNoKernelCanTake) {
  mha::DecodePlanOptions o = llama(2, 1000);
  o.shape.heads = 30;
  expect_refused(o, mha::DecodeStatusCode::kInvalidArgument, "multiple of shape.kv_heads");
  o = llama(0, 1000);
  expect_refused(o, mha::DecodeStatusCode::kInvalidArgument, "shape.batch");
  o = llama(2, 1000, "plan0x1");
  expect_refused(o, mha::DecodeStatusCode::kInvalidArgument, "split");
  o = llama(2, 1000, "cluster9");
  expect_refused(o, mha::DecodeStatusCode::kInvalidArgument, "split");
  o = llama(2, 1000);
  o.kernel = "decode_not_compiled";
  expect_refused(o, mha::DecodeStatusCode::kNotCompiled, "decode_not_compiled");
  o = llama(2, 1000);
  o.shape.depth = 96;  // no family of this build
  expect_refused(o, mha::DecodeStatusCode::kNotCompiled, "no compiled kernel");
  o = llama(2, 1000);
  o.shape.kv = "paged";
  expect_refused(o, mha::DecodeStatusCode::kInvalidArgument, "page_size");
}

TEST(DecodePlan, SetLengthsRefusesWhatIsOverItsCapacity) {
  mha::DecodePlan plan = made(llama(4, 1000, "plan2x128"));
  alignas(16) static unsigned char workspace[16];
  const std::vector<int> five(5, 10), too_long = {10, 1001};
  EXPECT_EQ(plan.set_lengths(five.data(), 5, workspace, nullptr).code,
            mha::DecodeStatusCode::kOverCapacity);
  const mha::DecodeStatus s = plan.set_lengths(too_long.data(), 2, workspace, nullptr);
  EXPECT_EQ(s.code, mha::DecodeStatusCode::kOverCapacity);
  EXPECT_NE(s.message.find("sequence 1 has 1001 keys"), std::string::npos) << s.message;
  EXPECT_EQ(plan.set_lengths(nullptr, 2, workspace, nullptr).code,
            mha::DecodeStatusCode::kInvalidArgument);
  EXPECT_EQ(plan.planned_batch(), 0);
}

// Arguments that pass every check: aligned stand-ins (run refuses before it reads them).
struct Views {
  alignas(16) unsigned char bytes[64] = {};
  mha::DecodeArgs args(int batch) {
    mha::DecodeArgs a;
    a.batch = batch;
    a.q = a.k_cache = a.v_cache = bytes;
    a.out = bytes;
    a.seq_lens = reinterpret_cast<const int*>(bytes);
    a.workspace = bytes;
    return a;
  }
};

void expect_run_refused(const mha::DecodePlan& plan, const mha::DecodeArgs& a,
                        mha::DecodeStatusCode code, const std::string& says) {
  const mha::DecodeStatus s = mha::run(plan, a, nullptr);
  EXPECT_EQ(s.code, code) << s.message;
  EXPECT_NE(s.message.find(says), std::string::npos) << s.message;
}

TEST(DecodePlan, RunRefusesViewsTheKernelsCannotRead) {
  const mha::DecodePlan plan = made(llama(4, 1000, "4"));
  Views v;
  expect_run_refused(mha::DecodePlan(), v.args(1), mha::DecodeStatusCode::kInvalidArgument,
                     "never made");
  expect_run_refused(plan, v.args(5), mha::DecodeStatusCode::kOverCapacity, "batch 5");
  mha::DecodeArgs a = v.args(2);
  a.q = nullptr;
  expect_run_refused(plan, a, mha::DecodeStatusCode::kInvalidArgument, "q, k_cache");
  a = v.args(2);
  a.seq_lens = nullptr;
  expect_run_refused(plan, a, mha::DecodeStatusCode::kInvalidArgument, "seq_lens");
  a = v.args(2);
  a.workspace = nullptr;
  expect_run_refused(plan, a, mha::DecodeStatusCode::kInvalidArgument, "workspace");
  a = v.args(2);
  a.q_head_stride = 132;  // not a multiple of 8 bf16 elements
  expect_run_refused(plan, a, mha::DecodeStatusCode::kInvalidArgument, "q: strides");
  a = v.args(2);
  a.kv_seq_stride = -1024;
  expect_run_refused(plan, a, mha::DecodeStatusCode::kInvalidArgument, "negative");
  a = v.args(2);
  a.out = v.bytes + 2;
  expect_run_refused(plan, a, mha::DecodeStatusCode::kInvalidArgument, "out: not 16-byte aligned");
}

TEST(DecodePlan, RaggedTokensTakeAMultiTokenKernelAndTheirOffsets) {
  mha::DecodePlanOptions o = llama(4, 1000, "4");
  o.shape.mask = "causal";
  o.shape.q_len = 1;  // at most one token a sequence, some none: still the multi-token kernel
  o.shape.ragged_q_len = true;
  const mha::DecodePlan plan = made(o);
  EXPECT_TRUE(plan.kernel().traits.multi_token) << plan.kernel().name;
  Views v;
  expect_run_refused(plan, v.args(2), mha::DecodeStatusCode::kInvalidArgument, "cu_seqlens_q");
  o.shape.ragged_q_len = false;
  o.shape.q_len = 4;
  mha::DecodeArgs a = v.args(2);
  a.cu_seqlens_q = reinterpret_cast<const int*>(v.bytes);
  expect_run_refused(made(o), a, mha::DecodeStatusCode::kInvalidArgument, "cu_seqlens_q: set, but");
}

TEST(DecodePlan, RunOfASplitPlanNeedsItsLengths) {
  const mha::DecodePlan plan = made(llama(4, 1000, "plan2x128"));
  Views v;
  expect_run_refused(plan, v.args(2), mha::DecodeStatusCode::kInvalidArgument, "set_lengths");
}

}  // namespace
