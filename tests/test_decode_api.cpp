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
