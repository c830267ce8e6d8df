// DecodePlan and run on the GPU against verify's reference: fixed, cluster and planned splits on
// contiguous, paged and fp8 caches, through strided views of an engine's tensors (a fused qkv
// buffer, vLLM's combined (pages, 2, page_size, kv_heads, depth) cache, a padded output), the LSE
// output, and a captured graph over 32 layers replayed after the batch's lengths changed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/decode_plan.h"
#include "gpu/device_buffer.h"
#include "gpu/library_view.h"
#include "gpu/problem_data.h"
#include "problems/problem.h"
#include "tests/gpu_test_support.h"
#include "verify/reference.h"
#include "verify/verification.h"

namespace mha {
namespace {

// The first compiled kernel whose family the predicate accepts, or null.
template <class Accept>
const KernelEntry* first_kernel(Accept accept) {
  for (const KernelEntry& k : kernel_registry())
    if (accept(k.traits)) return &k;
  return nullptr;
}

// The spec's problem in the kernel's dtypes (the spec gives the shape and lengths).
Problem problem_for(const KernelEntry& k, const std::string& spec) {
  const KernelTraits& t = k.traits;
  std::string why;
  std::vector<Problem> problems =
      instantiate(parse_problem_spec(spec + ",dtype=" + t.dtype + ",out_dtype=" + t.out_dtype +
                                     ",kv_dtype=" + cache_dtype(t)),
                  t, &why);
  if (problems.empty())
    throw std::logic_error(k.name + " computes no problem of '" + spec + "': " + why);
  return problems.front();
}

size_t bytes_of(const std::string& dtype) {
  return dtype == "fp32" ? 4 : dtype == "e4m3" || dtype == "e5m2" ? 1 : 2;
}

std::vector<float> to_floats(const std::vector<unsigned char>& raw, const std::string& dtype) {
  std::vector<float> out(raw.size() / bytes_of(dtype));
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype == "fp32") {
      std::memcpy(&out[i], &raw[i * 4], 4);
    } else if (dtype == "bf16") {
      __nv_bfloat16 h;
      std::memcpy(&h, &raw[i * 2], 2);
      out[i] = __bfloat162float(h);
    } else {
      __half h;
      std::memcpy(&h, &raw[i * 2], 2);
      out[i] = __half2float(h);
    }
  }
  return out;
}

// Copies `rows` rows of `row_bytes` from a packed buffer into one whose rows are `pitch` apart,
// starting `offset` bytes in.
void restride(void* dst, size_t pitch, size_t offset, const void* src, size_t row_bytes,
              size_t rows) {
  ASSERT_EQ(cudaMemcpy2D(static_cast<char*>(dst) + offset, pitch, src, row_bytes, row_bytes, rows,
                         cudaMemcpyDeviceToDevice),
            cudaSuccess);
}

struct Case {
  std::string split;     // "" : the defaults' choice
  bool strided = false;  // engine views: fused qkv, padded output, vLLM's combined cache
  bool lse = true;
};

// One plan and one run of `problem` through the library, checked against the reference.
void run_and_check(const KernelEntry& kernel, const Problem& problem, const Case& c) {
  const ProblemShape& s = problem.shape;
  ProblemData data(problem, 1);
  const DecodeParams in = data.params(0, 1);
  DecodePlanOptions o;
  o.shape = decode_shape_of(problem);
  o.page_size = s.page_size;
  o.window = s.window;
  o.chunk = s.chunk;
  o.kernel = kernel.name;
  o.split = c.split;
  DecodePlan plan;
  DecodeStatus status = DecodePlan::make(o, &plan);
  ASSERT_TRUE(status.ok()) << status.message;
  DeviceBuffer workspace(std::max<size_t>(16, plan.workspace_bytes()));
  if (plan.needs_lengths()) {
    status = plan.set_lengths(problem.lengths.data(), s.batch, workspace.get(), nullptr);
    ASSERT_TRUE(status.ok()) << status.message;
  }
  const size_t q_bytes = bytes_of(s.dtype), out_bytes = bytes_of(s.out_dtype),
               kv_bytes = bytes_of(s.kv_dtype);
  // A sequence's rows: its q_len tokens' heads, token-major ([batch][q_len][heads][depth]); a
  // ragged step's, the step's tokens one after another ([tokens][heads][depth]).
  const size_t head_elems = size_t(s.depth), seq_rows = size_t(s.q_len) * s.heads;
  const size_t rows = size_t(total_query_tokens(s)) * s.heads;
  DecodeArgs a = decode_args_of(in, problem, nullptr, workspace.get());
  DeviceBuffer q_fused, kv_combined, out_padded;
  if (c.strided) {
    ASSERT_EQ(s.q_len, 1) << "the engine views here are of single-token steps";
    ASSERT_TRUE(s.ragged_q_lens.empty());
    // q as the first heads of a fused qkv row per sequence: (heads + 2 kv_heads) heads apart.
    a.q_seq_stride = static_cast<long long>(s.heads + 2 * s.kv_heads) * s.depth;
    q_fused = DeviceBuffer(size_t(a.q_seq_stride) * s.batch * q_bytes);
    restride(q_fused.get(), a.q_seq_stride * q_bytes, 0, in.q, s.heads * head_elems * q_bytes,
             s.batch);
    a.q = q_fused.get();
    // K and V interleaved per page (vLLM) or per sequence slot: one buffer, views 2 blocks apart.
    const bool paged = s.kv != "contig";
    size_t block_elems = 0, blocks = 0;
    if (paged) {
      for (int n : problem.lengths) blocks += size_t(n + s.page_size - 1) / s.page_size;
      block_elems = size_t(s.page_size) * s.kv_heads * s.depth;
    } else {
      blocks = s.batch;
      block_elems = size_t(in.max_keys) * s.kv_heads * s.depth;
    }
    blocks = std::max<size_t>(1, blocks);
    kv_combined = DeviceBuffer(2 * blocks * block_elems * kv_bytes);
    restride(kv_combined.get(), 2 * block_elems * kv_bytes, 0, in.k_cache, block_elems * kv_bytes,
             blocks);
    restride(kv_combined.get(), 2 * block_elems * kv_bytes, block_elems * kv_bytes, in.v_cache,
             block_elems * kv_bytes, blocks);
    a.k_cache = kv_combined.get();
    a.v_cache = static_cast<const char*>(kv_combined.get()) + block_elems * kv_bytes;
    a.kv_seq_stride = static_cast<long long>(2 * block_elems);
    // The output rows padded by 8 heads' worth: an engine's larger buffer.
    a.out_seq_stride = static_cast<long long>(s.heads + 8) * s.depth;
  }
  const size_t out_row_elems =
      a.out_seq_stride != 0 ? size_t(a.out_seq_stride) : seq_rows * head_elems;
  DeviceBuffer out(out_row_elems * s.batch * out_bytes), lse(rows * sizeof(float));
  poison(out.get(), out.bytes());
  poison(lse.get(), lse.bytes());
  a.out = out.get();
  a.lse = c.lse ? lse.get<float>() : nullptr;
  status = run(plan, a, nullptr);
  ASSERT_TRUE(status.ok()) << status.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<unsigned char> padded(out.bytes()), packed;
  ASSERT_EQ(cudaMemcpy(padded.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!s.ragged_q_lens.empty()) {
    packed.assign(padded.begin(), padded.begin() + rows * head_elems * out_bytes);
  } else {
    for (int b = 0; b < s.batch; ++b) {
      const unsigned char* row = padded.data() + size_t(b) * out_row_elems * out_bytes;
      packed.insert(packed.end(), row, row + seq_rows * head_elems * out_bytes);
    }
  }
  std::vector<double> ref_lse;
  const std::vector<double> ref = gpu_reference(problem, data, &ref_lse);
  const ErrorReport e =
      compare_outputs(to_floats(packed, s.out_dtype), ref, tolerance_for(s.dtype, s.out_dtype));
  EXPECT_TRUE(e.passed) << kernel.name << " split " << plan.split() << ": " << e.reason;
  if (c.lse) {
    std::vector<float> got(rows);
    ASSERT_EQ(cudaMemcpy(got.data(), lse.get(), lse.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < rows; ++i) {
      if (std::isinf(ref_lse[i]) && got[i] == ref_lse[i]) continue;  // a row that sees no key
      // fp32 sums in either order: a few ulps of the exponent's argument.
      ASSERT_NEAR(got[i], ref_lse[i], 2e-3 * std::max(1.0, std::fabs(ref_lse[i])))
          << kernel.name << " split " << plan.split() << " row " << i;
    }
  }
}

bool is_llama_or_same(const KernelTraits& t) {
  return t.kv == "contig" && cache_dtype(t) == t.dtype && !t.soft_cap && t.mask == "null" &&
         !t.has_sink;
}

TEST(DecodePlanGpu, ContiguousSplitsMatchTheReference) {
  MHA_REQUIRE_GPU();
  const KernelEntry* k = first_kernel(is_llama_or_same);
  if (k == nullptr) GTEST_SKIP() << "no contiguous 16-bit kernel in this build";
  const Problem uniform = problem_for(*k, "batch=3,kv_heads=2,keys=3000");
  for (const std::string split : {"1", "4", "cluster4", ""}) {
    run_and_check(*k, uniform, {split, false});
    run_and_check(*k, uniform, {split, true});
  }
  const Problem ragged = problem_for(*k, "kv_heads=2,lengths=5:9000:130:1:4096:700");
  for (const std::string split : {"plan2x128", "plan1x256", "8", ""}) {
    run_and_check(*k, ragged, {split, false});
    run_and_check(*k, ragged, {split, true});
  }
}

TEST(DecodePlanGpu, PagedAndFp8CachesMatchTheReference) {
  MHA_REQUIRE_GPU();
  int ran = 0;
  for (const KernelEntry& k : kernel_registry()) {
    if (k.traits.kv == "contig" && cache_dtype(k.traits) == k.traits.dtype) continue;
    const std::string cap = k.traits.soft_cap ? ",soft_cap=30" : "";
    const std::string pages = k.traits.kv != "contig" ? ",page_size=16" : "";
    const Problem ragged = problem_for(k, "kv_heads=2,lengths=17:2000:333:4100" + pages + cap);
    for (const std::string split : {"1", "3", "cluster2", "plan2x128"}) {
      run_and_check(k, ragged, {split, false});
      run_and_check(k, ragged, {split, true});
    }
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no paged or fp8 kernel in this build";
}

TEST(DecodePlanGpu, SeveralQueryTokensMatchTheReference) {
  MHA_REQUIRE_GPU();
  const KernelEntry* k = first_kernel([](const KernelTraits& t) { return t.multi_token; });
  if (k == nullptr) GTEST_SKIP() << "no multi-token kernel in this build";
  for (const std::string q_len : {"2", "5"}) {
    const Problem uniform = problem_for(*k, "batch=3,kv_heads=2,keys=3000,q_len=" + q_len);
    const Problem ragged = problem_for(*k, "kv_heads=2,lengths=3:9000:130:1:700,q_len=" + q_len);
    for (const std::string split : {"1", "4", "cluster4", ""}) run_and_check(*k, uniform, {split});
    for (const std::string split : {"plan2x128", "8", ""}) run_and_check(*k, ragged, {split});
  }
  // Ragged tokens through cu_seqlens_q: a sequence of none, more tokens than keys, rows past a
  // block's; fixed, cluster and planned splits, with the LSE.
  const Problem tokens = problem_for(*k, "kv_heads=2,lengths=3:9000:130:1:700,q_lens=5:0:2:3:1");
  for (const std::string split : {"1", "4", "cluster4", "plan2x128", ""})
    run_and_check(*k, tokens, {split, false, true});
}

// An engine's step: 32 layers' run captured once; the lengths grow, set_lengths rewrites the work
// list, the graph replays and every layer's output matches the reference of the new lengths.
TEST(DecodePlanGpu, ACapturedGraphReplaysAfterTheLengthsChange) {
  MHA_REQUIRE_GPU();
  const KernelEntry* k = first_kernel(is_llama_or_same);
  if (k == nullptr) GTEST_SKIP() << "no contiguous 16-bit kernel in this build";
  const Problem problem = problem_for(*k, "kv_heads=2,lengths=4000:17:900:12000:64:3000");
  const ProblemShape& s = problem.shape;
  ProblemData data(problem, 1);
  const DecodeParams in = data.params(0, 1);
  DecodePlanOptions o;
  o.shape = decode_shape_of(problem);
  o.kernel = k->name;
  o.split = "plan2x128";
  DecodePlan plan;
  ASSERT_TRUE(DecodePlan::make(o, &plan).ok());
  DeviceBuffer workspace(plan.workspace_bytes());
  constexpr int kLayers = 32;
  const size_t out_bytes = size_t(s.batch) * s.heads * s.depth * bytes_of(s.out_dtype);
  std::vector<DeviceBuffer> outs;
  for (int l = 0; l < kLayers; ++l) outs.emplace_back(out_bytes);
  // The graph is captured with shorter lengths (the keys before each sequence's last).
  std::vector<int> before = problem.lengths;
  for (int& n : before) n = std::max(1, n / 2);
  DeviceBuffer lengths(sizeof(int) * s.batch);
  ASSERT_EQ(cudaMemcpy(lengths.get(), before.data(), lengths.bytes(), cudaMemcpyHostToDevice),
            cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_TRUE(plan.set_lengths(before.data(), s.batch, workspace.get(), stream).ok());
  DecodeArgs a;
  a.batch = s.batch;
  a.q = in.q;
  a.k_cache = in.k_cache;
  a.v_cache = in.v_cache;
  a.kv_max_keys = in.max_keys;
  a.seq_lens = lengths.get<int>();
  a.scale = in.scale;
  a.workspace = workspace.get();
  cudaGraph_t graph;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int l = 0; l < kLayers; ++l) {
    a.out = outs[l].get();
    const DecodeStatus st = run(plan, a, stream);
    ASSERT_TRUE(st.ok()) << st.message;
  }
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  // The next step: the full lengths, a new work list, the same graph.
  ASSERT_EQ(cudaMemcpyAsync(lengths.get(), problem.lengths.data(), lengths.bytes(),
                            cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_TRUE(plan.set_lengths(problem.lengths.data(), s.batch, workspace.get(), stream).ok());
  for (DeviceBuffer& out : outs) poison(out.get(), out.bytes(), stream);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<double> ref = reference_output(problem, data);
  for (int l = 0; l < kLayers; ++l) {
    std::vector<unsigned char> raw(out_bytes);
    ASSERT_EQ(cudaMemcpy(raw.data(), outs[l].get(), out_bytes, cudaMemcpyDeviceToHost),
              cudaSuccess);
    const ErrorReport e =
        compare_outputs(to_floats(raw, s.out_dtype), ref, tolerance_for(s.dtype, s.out_dtype));
    ASSERT_TRUE(e.passed) << "layer " << l << ": " << e.reason;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace mha
