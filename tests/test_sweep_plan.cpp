// The sweep's problems on the host (sweep/sweep_plan.h): specs times this build's kernels,
// merged by name, with "auto" resolved for the SM count and each kernel's row blocks, and split
// plans and --partitions applied; one name for two problems is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "api/split_plan.h"
#include "common/errors.h"
#include "sweep/sweep_plan.h"
#include "tests/test_support.h"

namespace mha {
namespace {

SweepPlanInput input(int sm_count, const std::string& partitions = "") {
  SweepPlanInput in;
  in.rule = default_partition_rule();
  in.sm_count = sm_count;
  in.partitions_override = partitions;
  return in;
}

TEST(SweepPlan, ProblemsShareTheirKernelsAndResolveAutoAndPlans) {
  const auto specs = {
      parse_problem_spec("dtype=bf16,out_dtype=bf16,kv=contig,batch=1,heads=32,kv_heads=8,keys="
                         "4096:131072,partitions=1:auto:plan")};
  const auto plan = plan_sweep(specs, testing::all_kernels(), input(132));
  ASSERT_EQ(plan.size(), 2u);
  for (const PlannedProblem& p : plan) {
    EXPECT_FALSE(p.kernels.empty());
    for (const KernelEntry* k : p.kernels) EXPECT_EQ(k->traits.kv, "contig");
    ASSERT_EQ(p.problem.partitions.size(), 3u) << p.problem.shape.name;
    EXPECT_TRUE(is_split_plan(p.problem.partitions.front())) << "plans sort first (negative)";
    EXPECT_EQ(p.problem.partitions[1], 1);
  }
  // Two blocks per SM over 8 KV heads: 33 at 131k keys; 4096 keys allow 16 of 256 keys.
  EXPECT_EQ(plan[0].problem.partitions[2], 16);
  EXPECT_EQ(plan[1].problem.partitions[2], 33);
  EXPECT_EQ(plan_sweep(specs, testing::all_kernels(), input(66))[1].problem.partitions[2], 17);
}

TEST(SweepPlan, PartitionsOverrideReplacesEverySpecs) {
  const auto specs = {parse_problem_spec("dtype=bf16,kv=contig,keys=512,partitions=1:2")};
  const auto plan = plan_sweep(specs, testing::all_kernels(), input(132, "4:plan"));
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_EQ(plan[0].problem.partitions.size(), 2u);
  EXPECT_EQ(split_label(plan[0].problem.partitions[0]), "plan2x128");
  EXPECT_EQ(plan[0].problem.partitions[1], 4);
}

TEST(SweepPlan, OneNameForTwoProblemsIsRefused) {
  // Without dtype or kv the spec takes each kernel's family: the bf16 contiguous and the fp16
  // paged kernels of the CI build would get different problems under one name.
  const bool has_paged = std::any_of(kernel_registry().begin(), kernel_registry().end(),
                                     [](const KernelEntry& k) { return k.traits.kv == "paged"; });
  if (!has_paged) GTEST_SKIP() << "needs a paged and a contiguous kernel in the build";
  const auto specs = {parse_problem_spec("name=one,batch=1,heads=32,kv_heads=8,keys=512")};
  EXPECT_THROW(plan_sweep(specs, testing::all_kernels(), input(132)), UsageError);
}

TEST(SweepPlan, TwoSpecsOfOneProblemRunItOnceWithBothSplits) {
  // The first spec leaves kv to each kernel's family (a paged kernel makes it paged, pages of 16);
  // the second names the same paged problem with other splits.
  const bool has_paged = std::any_of(kernel_registry().begin(), kernel_registry().end(),
                                     [](const KernelEntry& k) { return k.traits.kv == "paged"; });
  if (!has_paged) GTEST_SKIP() << "needs a paged kernel in the build";
  const std::vector<ProblemSpec> specs = {
      parse_problem_spec("batch=1,heads=32,kv_heads=8,keys=512,partitions=1:8"),
      parse_problem_spec(
          "batch=1,heads=32,kv_heads=8,keys=512,kv=paged,page_size=16,partitions=8:cluster8")};
  size_t points = 0;
  const auto problems_of = problems_by_kernel(testing::all_kernels(), specs, "", &points);
  for (const KernelEntry& k : kernel_registry()) {
    const std::vector<Problem>& problems = problems_of.at(k.name);
    if (k.traits.kv != "paged") continue;
    ASSERT_EQ(problems.size(), 1u) << k.name;
    EXPECT_EQ(problems[0].partitions.size(), 3u) << "1, 8 and cluster8, 8 once";
  }
  for (const PlannedProblem& p : plan_sweep(specs, testing::all_kernels(), input(132))) {
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      for (size_t j = i + 1; j < p.kernels.size(); ++j) {
        EXPECT_NE(p.kernels[i], p.kernels[j]) << p.problem.shape.name << ": a kernel listed twice";
      }
    }
    if (p.kernels.front()->traits.kv == "paged") {
      EXPECT_EQ(p.problem.partitions.size(), 3u);
    }
  }
}

}  // namespace
}  // namespace mha
