// Host tests for the device-memory estimate of a problem (src/sweep/memory_budget.h): the bytes
// follow ProblemData's, StepBuffers' and the GPU reference's allocations, and a problem that needs
// more than the (injected) free memory gets a sentence naming what it needs and what is free.
#include <gtest/gtest.h>

#include <string>

#include "api/split_plan.h"
#include "sweep/memory_budget.h"
#include "verify/reference.h"

namespace mha {
namespace {

Problem problem(int batch, int keys, std::vector<int> partitions) {
  Problem p;
  p.shape.name = "b" + std::to_string(batch) + "_n" + std::to_string(keys);
  p.shape.batch = batch;
  p.shape.heads = 32;
  p.shape.kv_heads = 8;
  p.shape.depth = 128;
  p.shape.keys = keys;
  p.lengths.assign(batch, keys);
  p.partitions = std::move(partitions);
  return p;
}

TEST(MemoryBudget, ContiguousCopiesOutputsAndPartials) {
  const Problem p = problem(2, 256, {1, 4});
  ASSERT_TRUE(use_cpu_reference(p));
  const MemoryNeed need = problem_device_bytes(p, 3);
  const double q = 2.0 * 32 * 128 * 2;
  const double kv = 2.0 * 2 * 256 * 8 * 128 * 2;
  EXPECT_DOUBLE_EQ(need.inputs_bytes, 3 * (q + kv) + 4 * 2);  // + lengths
  const double rows = 2.0 * 32;
  EXPECT_DOUBLE_EQ(need.outputs_bytes, rows * 128 * 2 + rows * 4 * (128 + 2) * 4);  // P = 4
  EXPECT_DOUBLE_EQ(need.reference_bytes, 0);                                        // CPU reference
  EXPECT_GT(need.reserve_bytes, 0);
  EXPECT_DOUBLE_EQ(need.total(), need.inputs_bytes + need.outputs_bytes + need.reference_bytes +
                                     need.reserve_bytes);
  // The fused reduce adds its per-row counters.
  EXPECT_DOUBLE_EQ(problem_device_bytes(p, 3, true).outputs_bytes, need.outputs_bytes + rows * 4);
}

TEST(MemoryBudget, ClusterSplitsWriteNoPartials) {
  // Cluster splits are encoded as P + kClusterSplitBase on the partitions axis: the partials are
  // sized by the largest fixed count beside them, not by the encoding.
  const Problem fixed = problem(6, 512, {1, 3, 7});
  const Problem with_clusters = problem(6, 512, {1, 3, 7, encode_cluster_split(8)});
  EXPECT_DOUBLE_EQ(problem_device_bytes(with_clusters, 1).outputs_bytes,
                   problem_device_bytes(fixed, 1).outputs_bytes);
  const Problem cluster_only = problem(6, 512, {encode_cluster_split(4)});
  EXPECT_DOUBLE_EQ(problem_device_bytes(cluster_only, 1).outputs_bytes, 6.0 * 32 * 128 * 2);
}

TEST(MemoryBudget, PagedCopiesKeepCopyZerosLogicalCacheAndStageTheRest) {
  Problem p = problem(2, 33, {1});
  p.shape.kv = "paged";
  p.shape.page_size = 16;
  p.lengths = {20, 33};  // 2 + 3 pages
  const double q = 2.0 * 32 * 128 * 2;
  const double paged = 2.0 * 5 * 16 * 8 * 128 * 2;
  const double logical = 2.0 * 2 * 33 * 8 * 128 * 2;
  const double fixed = 4 * 2 + 4 * 2 * 3;  // lengths, page table
  EXPECT_DOUBLE_EQ(problem_device_bytes(p, 1).inputs_bytes, q + paged + logical + fixed);
  EXPECT_DOUBLE_EQ(problem_device_bytes(p, 4).inputs_bytes, 4 * (q + paged) + 2 * logical + fixed);
}

TEST(MemoryBudget, LargeProblemsCountTheGpuReference) {
  const Problem p = problem(8, 131072, {1});
  ASSERT_FALSE(use_cpu_reference(p));
  const double rows = 8.0 * 32;
  EXPECT_DOUBLE_EQ(problem_device_bytes(p, 1).reference_bytes, rows * 128 * 4 + rows * 131072 * 4);
}

TEST(MemoryBudget, ShortfallNamesTheProblemWhatItNeedsAndWhatIsFree) {
  // batch 128 at 512k keys: 275 GB of K/V per copy, more than any GPU has.
  const Problem p = problem(128, 524288, {1, 8});
  const MemoryNeed need = problem_device_bytes(p, 2);
  EXPECT_GT(need.total(), 2 * 275e9);
  const size_t free_bytes = size_t(140) << 30;
  const auto why = memory_shortfall(p, need, free_bytes, 0);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("problem b128_n524288 needs"), std::string::npos) << *why;
  EXPECT_NE(why->find("2 input copies"), std::string::npos) << *why;
  EXPECT_NE(why->find("GPU 0 has 140.00 GiB free"), std::string::npos) << *why;
  EXPECT_EQ(why->find(".cu"), std::string::npos) << *why;  // no source path
  EXPECT_EQ(why->find(".cpp"), std::string::npos) << *why;

  // Exactly enough fits; one byte less does not.
  const Problem small = problem(1, 4096, {1});
  const MemoryNeed small_need = problem_device_bytes(small, 4);
  EXPECT_FALSE(memory_shortfall(small, small_need, size_t(small_need.total()) + 1, 0));
  EXPECT_TRUE(memory_shortfall(small, small_need, size_t(small_need.total()) - 1, 0));
}

}  // namespace
}  // namespace mha
