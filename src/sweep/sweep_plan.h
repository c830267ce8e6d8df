// `sweep --dry-run`: the plan of a sweep (problems x kernels x partitions, this shard's points)
// and an estimate of its duration, as a table or as JSON. Needs no GPU.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/partition_rule.h"
#include "problems/problem.h"
#include "registry/kernel_registry.h"
#include "sweep/sharding.h"

namespace mha {

// One problem of the plan and the kernels that compute it (partitions already resolved).
struct PlannedProblem {
  Problem problem;
  std::vector<const KernelEntry*> kernels;
};

// What turns specs into a sweep's problems besides the kernels: --partitions (replacing each
// spec's), the rule "auto" resolves with, for this SM count, and the inputs' seed.
struct SweepPlanInput {
  std::string partitions_override;  // "" or a --partitions list, e.g. "1:16:plan"
  PartitionRule rule;
  int sm_count = 0;
  uint64_t seed = 1;
};

// A problem's partitions as run: "auto" resolved with `rule` for this SM count and the kernel's
// row blocks per KV head, then sorted (split plans first) without repeats.
void resolve_partitions(Problem& p, const PartitionRule& rule, int sm_count,
                        const KernelTraits& kernel);

// Every spec instantiated for every kernel whose family computes it, merged by problem name (a
// problem's kernels share its data and reference), with "auto" partitions resolved for each
// kernel's row blocks per KV head. Throws UsageError when one name stands for two problems.
std::vector<PlannedProblem> plan_sweep(const std::vector<ProblemSpec>& specs,
                                       const std::vector<const KernelEntry*>& kernels,
                                       const SweepPlanInput& in);

// Each kernel's problems, by kernel name: the built-in `suite` for its family ("" for none), then
// every spec its family computes (verify and phases run them kernel by kernel). *points counts
// the (problem, split) points, an unresolved "auto" as one.
std::map<std::string, std::vector<Problem>> problems_by_kernel(
    const std::vector<const KernelEntry*>& kernels, const std::vector<ProblemSpec>& specs,
    const std::string& suite, size_t* points);

struct PlanOptions {
  bool json = false;
  std::optional<ShardSpec> shard;
  double time_budget_s = 0.25;  // sweep --time-budget: sampling per point at most
  bool use_graph = true;
  bool warm = false;
  int sm_count = 0;  // "auto" was resolved for this many SMs (sweep --sm-count)
  std::optional<std::set<std::string>> points;  // sweep --points: only these point keys
  std::string points_file;
};

// What the estimate assumes, all from the committed H200 runs (results/h200_2026-11-29_*.json):
// the measured streaming-read peak, the ~7 us fixed cost of a step at small shapes
// (docs/performance.md), and the stopping rule converging at its 10-sample minimum (the default
// sweep's rows average 10.0 samples).
struct EstimateModel {
  double read_gbps = 4400;
  double step_floor_us = 7;
  int samples = 10;
  int l2_bytes = 62914560;             // H200 L2: inputs rotate past it (cold-cache timing)
  double warmup_s = 0.02;              // TimingOptions::warmup_s
  double per_point_overhead_s = 0.02;  // verification launch, comparison, journal line
  double per_problem_setup_s = 0.25;   // inputs generated and uploaded, reference computed
};

// Estimated wall seconds of one point: overhead + warm-up + min(budget, samples x steps per
// sample x step time), with step time = max(floor, bytes / bandwidth).
double estimate_point_s(const Problem& p, int partitions, const PlanOptions& o,
                        const EstimateModel& m = {});

// Prints the plan (JSON with o.json) and returns kExitOk; throws UsageError when the plan (or
// this shard of it) has no point, so that a dry run never passes on nothing.
int print_sweep_plan(const std::vector<PlannedProblem>& plan, const PlanOptions& o);

}  // namespace mha
