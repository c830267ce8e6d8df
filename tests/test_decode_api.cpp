// The library API of decode_api.h, with no GPU: names resolve to the registry's entries, an
// unknown name or missing partials launch nothing, and the workspace matches StepBuffers' sizes.
#include <gtest/gtest.h>

#include <vector>

#include "decode_api.h"

namespace {

TEST(DecodeApi, FindsEveryCompiledInstanceAndNothingElse) {
  const auto& registry = mha::kernel_registry();
  ASSERT_FALSE(registry.empty());
  for (const auto& k : registry) EXPECT_EQ(mha::find_kernel(k.name), &k);
  EXPECT_EQ(mha::find_kernel(""), nullptr);
  EXPECT_EQ(mha::find_kernel(registry.front().name + "_x"), nullptr);
}

TEST(DecodeApi, UnknownNameOrMissingPartialsLaunchNothing) {
  mha::DecodeParams p;
  // Both return before any CUDA call, so they are the same with and without a device.
  EXPECT_EQ(mha::decode(p, "decode_not_compiled", nullptr), cudaErrorInvalidValue);
  p.partitions = 2;
  EXPECT_EQ(mha::decode(p, mha::kernel_registry().front().name, nullptr), cudaErrorInvalidValue);
}

TEST(DecodeApi, WorkspaceHoldsThePartialsBackToBack) {
  // StepBuffers: rows * partitions * depth floats of partial_out, rows * partitions each of max
  // and sum (rows = batch * heads).
  EXPECT_EQ(mha::decode_workspace_bytes(3, 32, 128, 4), (3u * 32 * 4 * 128 + 2u * 3 * 32 * 4) * 4);
  EXPECT_EQ(mha::decode_workspace_bytes(3, 32, 128, 1), 0u);
  EXPECT_EQ(mha::decode_workspace_bytes(0, 32, 128, 4), 0u);

  mha::DecodeParams p;
  p.batch = 2, p.heads = 8, p.partitions = 3;
  std::vector<char> ws(mha::decode_workspace_bytes(p.batch, p.heads, 64, p.partitions));
  mha::attach_decode_workspace(p, 64, ws.data());
  const auto* base = reinterpret_cast<float*>(ws.data());
  EXPECT_EQ(p.partial_out, base);
  EXPECT_EQ(p.partial_max, base + 2 * 8 * 3 * 64);
  EXPECT_EQ(p.partial_sum, base + 2 * 8 * 3 * 64 + 2 * 8 * 3);
  EXPECT_EQ(reinterpret_cast<const char*>(p.partial_sum + 2 * 8 * 3), ws.data() + ws.size());

  p.partitions = 1;
  mha::attach_decode_workspace(p, 64, ws.data());
  EXPECT_EQ(p.partial_out, nullptr);
  EXPECT_EQ(p.partial_max, nullptr);
  EXPECT_EQ(p.partial_sum, nullptr);
}

}  // namespace

namespace {

// choose_decode over the compiled-in defaults (results/mha_tune_defaults.h, measured on the
// H200's default config) and whatever kernels this build has (CI: configs/ci.json).
TEST(DecodeApi, ChoosesACompiledKernelThatComputesTheShape) {
  mha::DecodeShape s;  // Llama-3-8B, bf16, contiguous
  s.max_keys = 4096;
  const mha::DecodeChoice c = mha::choose_decode(s, 132);
  ASSERT_NE(c.kernel, nullptr) << c.reason;
  EXPECT_EQ(c.kernel->traits.group, 4);
  EXPECT_EQ(c.kernel->traits.dtype, "bf16");
  EXPECT_EQ(c.kernel->traits.kv, "contig");
  EXPECT_GE(c.partitions, 1);
  EXPECT_FALSE(c.reason.empty());
  // Tuned only where the table's kernel for the bucket is the one this build runs.
  if (c.is_tuned) {
    EXPECT_EQ(c.reason, "tuned: the shape's bucket");
  }
}

TEST(DecodeApi, FallsBackToTheFamilysFirstKernelAndTheRule) {
  mha::DecodeShape s;
  s.dtype = "fp16";  // no fp16 bucket was measured
  s.out_dtype = "fp32";
  s.kv = "paged";
  s.max_keys = 1 << 17;
  const mha::DecodeChoice c = mha::choose_decode(s, 132);
  const mha::KernelEntry* first = nullptr;
  for (const auto& k : mha::kernel_registry())
    if (!first && k.traits.dtype == "fp16" && k.traits.out_dtype == "fp32" && k.traits.kv == "paged" &&
        k.traits.group == 4 && k.traits.depth == 128 && k.traits.mask == "null" && !k.traits.has_sink)
      first = &k;
  EXPECT_EQ(c.kernel, first) << c.reason;
  EXPECT_FALSE(c.is_tuned);
  if (first) {
    EXPECT_GT(c.partitions, 1) << "batch 1, 8 KV heads, 131k keys: the rule splits";
    EXPECT_NE(c.reason.find("first compiled kernel of the family"), std::string::npos) << c.reason;
  }
}

TEST(DecodeApi, NoKernelForAShapeNothingComputesOrAnInvalidOne) {
  mha::DecodeShape s;
  s.heads = 28;  // group 7: not in the CI build
  s.kv_heads = 4;
  EXPECT_EQ(mha::choose_decode(s, 132).kernel, nullptr);
  s.heads = 30;  // not a multiple of kv_heads
  const mha::DecodeChoice bad = mha::choose_decode(s, 132);
  EXPECT_EQ(bad.kernel, nullptr);
  EXPECT_NE(bad.reason.find("invalid shape"), std::string::npos);
}

}  // namespace
