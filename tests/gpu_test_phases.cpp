// GPU test of the phase stamps (a -DMHA_PHASE_CLOCK=ON build; other builds skip it, saying so):
// one stamped step of a split kernel. Each block's phases come in order, and every reduce block
// got past its wait only after the last decode block exited: the programmatic launch's edge,
// seen on the GPU's own clock. A cluster combine's blocks meet, combine, then pass the last
// barrier, in that order.
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu/phase_runner.h"
#include "gpu/point_runner.h"
#include "gpu/problem_data.h"
#include "problems/problem.h"
#include "registry/kernel_registry.h"
#include "reports/phase_timeline.h"
#include "tests/gpu_test_support.h"

namespace mha {
namespace {

// One stamped step of every contiguous kernel without a mask or a cache type of its own, on 3,000
// keys in 4 partitions combined by `mode`; `check` sees each kernel's problem and stamps.
template <class Check>
void for_each_stamped_step(ReduceMode mode, Check check) {
  int checked = 0;
  for (const KernelEntry& k : kernel_registry()) {
    if (k.traits.kv != "contig" || k.traits.mask != "null" || k.traits.soft_cap ||
        cache_dtype(k.traits) != k.traits.dtype)
      continue;
    std::string why;
    const std::string spec = "batch=2,heads=" + std::to_string(2 * k.traits.group) +
                             ",kv_heads=2,depth=" + std::to_string(k.traits.depth) +
                             ",keys=3000,partitions=4";
    std::vector<Problem> problems = instantiate(parse_problem_spec(spec), k.traits, &why);
    ASSERT_FALSE(problems.empty()) << k.name << ": " << why;
    Problem& problem = problems.front();
    problem.seed = 3;
    ProblemData data(problem, 1);
    StepBuffers buffers(problem, k.traits, 4, mode);
    check(k, problem, run_stamped_step(k, data, 0, 4, buffers, 0));
    ++checked;
  }
  EXPECT_GT(checked, 0)
      << "no contiguous bf16/fp16 kernel without a mask in this build: nothing was checked";
}

TEST(PhaseStamps, StepPhasesAreOrderedAndTheReduceWaitsForTheDecodeGrid) {
  MHA_REQUIRE_GPU();
  if (!phase_stamps_compiled_in())
    GTEST_SKIP() << "this build has no phase stamps (-DMHA_PHASE_CLOCK=ON)";
  for_each_stamped_step(ReduceMode::kProgrammatic, [](const KernelEntry& k, const Problem& problem,
                                                      const PhaseStamps& s) {
    uint64_t last_decode_exit = 0;
    int working = 0;
    for (const DecodeBlockStamps& b : s.decode) {
      ASSERT_NE(b.start_ns, 0u) << k.name << ": a decode block without stamps";
      EXPECT_LE(b.start_ns, b.exit_ns);
      EXPECT_LT(b.start_cycle, b.first_tile_cycle);
      EXPECT_LE(b.first_tile_cycle, b.loop_end_cycle);
      EXPECT_LE(b.loop_end_cycle, b.merged_cycle);
      EXPECT_LE(b.merged_cycle, b.exit_cycle);
      EXPECT_EQ(b.cluster_met_cycle, 0u);  // a reduce launch, not a cluster
      EXPECT_EQ(b.combined_cycle, 0u);
      last_decode_exit = std::max(last_decode_exit, b.exit_ns);
      working += b.first_tile_cycle != 0;
    }
    EXPECT_EQ(working,
              static_cast<int>(s.decode.size()));  // 3,000 keys in 4 parts: every block has tiles
    ASSERT_EQ(s.reduce.size(), static_cast<size_t>(problem.shape.heads * problem.shape.batch));
    for (const ReduceBlockStamps& r : s.reduce) {
      ASSERT_NE(r.waited_ns, 0u) << k.name << ": a reduce block did not combine";
      EXPECT_GE(r.waited_ns, last_decode_exit)
          << k.name << ": the reduce read partials before the decode grid ended";
      EXPECT_LE(r.waited_ns, r.exit_ns);
    }
    const PhaseSummary sum = summarise_phases(s.decode, s.reduce, 0.5);
    EXPECT_GT(sum.loop_us, 0);
    EXPECT_GE(sum.step_us, sum.decode_end_us);
  });
}

TEST(PhaseStamps, ClusterCombinePhasesAreOrdered) {
  MHA_REQUIRE_GPU();
  if (!phase_stamps_compiled_in())
    GTEST_SKIP() << "this build has no phase stamps (-DMHA_PHASE_CLOCK=ON)";
  for_each_stamped_step(
      ReduceMode::kCluster, [](const KernelEntry& k, const Problem&, const PhaseStamps& s) {
        EXPECT_TRUE(s.reduce.empty() ||
                    std::all_of(s.reduce.begin(), s.reduce.end(),
                                [](const ReduceBlockStamps& r) { return r.start_ns == 0; }))
            << k.name << ": a cluster combine launched a reduce";
        for (const DecodeBlockStamps& b : s.decode) {
          ASSERT_NE(b.cluster_met_cycle, 0u)
              << k.name << ": a block of a cluster launch did not meet its cluster";
          EXPECT_LE(b.merged_cycle, b.cluster_met_cycle);
          EXPECT_LE(b.cluster_met_cycle, b.combined_cycle);
          EXPECT_LE(b.combined_cycle, b.exit_cycle);
        }
        const PhaseSummary sum = summarise_phases(s.decode, s.reduce, 0.5);
        EXPECT_GT(sum.last_barrier_us, 0) << k.name;
        EXPECT_LE(sum.last_barrier_us, sum.finish_us);
      });
}

}  // namespace
}  // namespace mha
