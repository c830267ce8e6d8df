// `mha-tune phases`: where a step's time goes inside its kernels. For each selected kernel and
// problem point, verifies the point, runs warm-up steps, then steps whose blocks stamp their
// phases (kernels/phase_clock.cuh), and prints the median of each phase over those steps: when
// the last decode block started, each block's ramp (start to first tile landed), key loop and
// tail, and when the reduce started, got its partials and ended; beside them the point timed as
// the sweep times it. Needs a build configured with -DMHA_PHASE_CLOCK=ON; the stamps add a few
// stores per block, so reports come from normal builds.
#include <fmt/format.h>

#include <map>
#include <memory>

#include "api/split_plan.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "gpu/cuda_stream.h"
#include "gpu/device_info.h"
#include "gpu/phase_runner.h"
#include "gpu/point_runner.h"
#include "gpu/step_timer.h"
#include "problems/problem.h"
#include "reports/phase_timeline.h"
#include "reports/select.h"
#include "sweep/kernel_selection.h"
#include "sweep/memory_budget.h"
#include "sweep/sweep_plan.h"
#include "verify/reference.h"
#include "verify/verify_point.h"

namespace mha {
namespace {

struct PhasesOptions {
  std::vector<std::string> filters, problem_specs;
  std::string problems_file, reduce = "programmatic";
  int device = 0, steps = 9, warmup = 20;
  uint64_t seed = 1;
};

int run_phases(const PhasesOptions& o) {
  if (!phase_stamps_compiled_in())
    throw UsageError(
        "phases: this build records no phase stamps; configure a separate build with "
        "-DMHA_PHASE_CLOCK=ON (e.g. MHA_CMAKE_ARGS=-DMHA_PHASE_CLOCK=ON with scripts/setup.sh) and "
        "run its mha-tune");
  const auto kernels = select_kernels(o.filters);
  const ReduceMode reduce = reduce_mode_from_name(o.reduce);
  if (reduce == ReduceMode::kFused)
    throw UsageError(
        "phases: --reduce fused has no reduce launch to stamp; use separate, programmatic or "
        "cluster");
  const std::vector<ProblemSpec> specs = collect_problem_specs(o.problem_specs, o.problems_file);
  if (specs.empty())
    throw UsageError("phases: give the problems to stamp (--problem or --problems)");
  size_t planned = 0;
  std::map<std::string, std::vector<Problem>> problems_of =
      problems_by_kernel(kernels, specs, "", &planned);
  if (planned == 0)
    throw UsageError(
        fmt::format("phases: no selected kernel ({}) computes any problem given; nothing to stamp",
                    kernels.size()));
  require_device(o.device);
  const DeviceProps props = device_props(o.device);
  const double nominal_ns_per_cycle =
      props.sm_clock_max_mhz > 0 ? 1e3 / props.sm_clock_max_mhz : 0.5;
  for (const KernelEntry* k : kernels)
    for (Problem& p : problems_of[k->name])
      resolve_partitions(p, default_partition_rule(), props.sm_count, k->traits);

  const CudaStream owned_stream = CudaStream::on_current_device();
  const cudaStream_t stream = owned_stream.get();
  fmt::print(
      "Phase stamps on {}: µs from the first decode block's start, median of {} steps after {} "
      "warm-up steps; per-block phases are medians (and maxima) over the blocks with a tile; "
      "timed step: the point as the sweep times it, in this build.\n\n{}",
      props.name, o.steps, o.warmup, phase_table_header());
  int stamped = 0, failures = 0;
  for (const KernelEntry* k : kernels) {
    for (Problem& problem : problems_of[k->name]) {
      problem.seed = o.seed;
      const int copies = rotation_copies(copy_bytes(problem), props.l2_bytes);
      if (auto short_of = memory_shortfall(problem, problem_device_bytes(problem, copies, false),
                                           free_device_bytes(), o.device)) {
        fmt::print("| {} | {} | - | not run: {} |\n", k->name, problem.shape.name, *short_of);
        continue;
      }
      ProblemData data(problem, copies);
      const std::vector<double> ref = reference_output(problem, data);
      for (int partitions : problem.partitions) {
        const std::string split = split_label(partitions);
        // A wrong kernel is never profiled: verify the point as the sweep does before timing it.
        const VerifyOutcome v = verify_point(*k, problem, data, partitions, ref, reduce);
        if (v.status != Status::kPassed) {
          failures += v.status != Status::kNotSupported;
          fmt::print("| {} | {} | {} | {}: {} |\n", k->name, problem.shape.name, split,
                     status_name(v.status), v.reason);
          continue;
        }
        StepBuffers buffers(problem, k->traits, partitions, reduce);
        for (int i = 0; i < o.warmup; ++i) {
          DecodeParams p = data.params(i % copies, partitions);
          buffers.attach(p);
          MHA_CUDA_CHECK(k->launch(p, stream));
        }
        std::vector<PhaseSummary> steps;
        for (int i = 0; i < o.steps; ++i) {
          const PhaseStamps s =
              run_stamped_step(*k, data, (o.warmup + i) % copies, partitions, buffers, stream);
          steps.push_back(summarise_phases(s.decode, s.reduce, nominal_ns_per_cycle));
        }
        // The same point timed as the sweep times it (graph replays, rotated copies), in this
        // build: the timed step less the in-kernel span is the launches and the gaps between them.
        const double timed_us =
            time_step(*k, data, partitions, buffers, TimingOptions{}, stream).median_us;
        fmt::print("{}", phase_table_row(k->name, problem.shape.name, split, median_phases(steps),
                                         timed_us));
        ++stamped;
      }
    }
  }
  fmt::print("\n{} point(s) stamped, {} failed verification\n", stamped, failures);
  if (stamped == 0 && failures == 0) {
    fmt::print("phases: no point could run on this GPU; nothing was stamped\n");
    return kExitFailure;
  }
  return failures > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void add_phases_command(CLI::App& app) {
  auto o = std::make_shared<PhasesOptions>();
  auto* cmd = app.add_subcommand(
      "phases", "Where a step's time goes inside its kernels (a -DMHA_PHASE_CLOCK=ON build)");
  add_selection_options(cmd, o->filters, o->problem_specs, o->problems_file,
                        "batch=1,heads=32,kv_heads=8,keys=32768,partitions=16:cluster8");
  cmd->add_option("--reduce", o->reduce,
                  "Split-K combination: programmatic (default), separate or cluster");
  cmd->add_option("--steps", o->steps, "Stamped steps per point (the table shows their median)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--warmup", o->warmup, "Plain steps before the stamped ones")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--device", o->device, "CUDA device index");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->check(CLI::NonNegativeNumber);
  cmd->callback([o] { set_command_exit(run_phases(*o)); });
}

}  // namespace mha
