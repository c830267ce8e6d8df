// `mha-tune sweep` as a library call: every selected kernel over a problem suite and every split
// asked for; each point verified, then timed (docs/design.md "Measurement"), journaled as it
// finishes, and written as JSON and CSV reports at the end (or on a sticky error, after the
// journal is flushed). The command (cli/cmd_sweep.cpp) only parses its options into these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

// The sweep's options, one per command-line option of `mha-tune sweep`.
struct SweepOptions {
  std::string config, problems_file, out_prefix, timing = "graph", partitions,
                                                 reduce = "programmatic";
  std::string devices, shard, rule_file, points_file;
  std::vector<std::string> filters, problem_specs;
  bool resume = false, force = false, quiet = false, warm = false, dry_run = false, json = false;
  bool samples = false;  // write the samples sidecar (reports/samples_file.h)
  int device = 0;
  int sm_count = 0;  // --dry-run's SM count for "auto" (0: the H200's)
  uint64_t seed = 1;
  double time_budget_s = 0.25, target_error = 0.005;
  // The run's provenance, recorded in the reports' metadata.
  std::string command_line, tool_version, git_commit;
};

// Runs the sweep, or with `dry_run` prints its plan (no GPU needed), and returns the exit code
// (docs/design.md, "Errors"): kExitFailure when a point was incorrect, kExitEnvironment when a GPU
// was lost, kExitInterrupted when Ctrl-C or SIGTERM stopped it after the points in flight.
// Throws UsageError for options it cannot run, CudaError when every GPU failed.
int run_sweep(const SweepOptions& options);

}  // namespace mha
