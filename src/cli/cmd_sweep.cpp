// `mha-tune sweep`: its options parsed into a SweepOptions; the sweep runner
// (runner/sweep_runner.h) runs it.
#include <memory>

#include "cli/commands.h"
#include "runner/sweep_runner.h"

namespace mha {

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd =
      app.add_subcommand("sweep", "Verify and time every selected kernel over a problem suite");
  cmd->add_option("--config", o->config,
                  "Config file whose \"suite\" to sweep (and whose hash to record)");
  add_selection_options(cmd, o->filters, o->problem_specs, o->problems_file,
                        "batch=8,keys=512:8192");
  cmd->add_option("--partitions", o->partitions, "Override partitions: a list \"1:4:16\" or auto");
  cmd->add_option("--rule", o->rule_file,
                  "Partition rule for auto: a `mha-tune select --out-json` file");
  cmd->add_option("--out", o->out_prefix, "Report path prefix (default results/<gpu>_<date>)");
  cmd->add_flag("--resume", o->resume,
                "Continue the journal of --out where it stopped (no --out: this GPU's newest)");
  cmd->add_flag("--samples", o->samples,
                "Also write every timed point's samples to PREFIX.samples.jsonl (for compare "
                "--samples)");
  cmd->add_flag("--force", o->force,
                "Replace a journal of --out that holds an earlier sweep's rows (refused without)");
  cmd->add_option("--timing", o->timing, "graph (CUDA-graph replays, default) or stream");
  cmd->add_option(
      "--reduce", o->reduce,
      "Split-K combination: programmatic (default: a separate reduce launch with programmatic "
      "dependent launch, measured fastest), separate (a plain second launch), fused into the "
      "decode kernel, or cluster (2..8 fixed partitions combine in the decode launch through "
      "distributed shared memory; other splits use programmatic)");
  cmd->add_flag("--warm", o->warm, "Do not rotate inputs beyond the L2 (warm-cache timing)");
  cmd->add_option("--time-budget", o->time_budget_s, "Seconds of sampling per point at most");
  cmd->add_option("--target-error", o->target_error,
                  "Stop sampling once the median's relative error is below this");
  cmd->add_option("--device", o->device, "CUDA device index");
  cmd->add_option("--devices", o->devices,
                  "Several GPUs of this host: all, or a list such as 0,1,3");
  cmd->add_option("--points", o->points_file,
                  "Only the points this file lists (a `select --suggest ... --out-points` output)");
  cmd->add_option("--shard", o->shard,
                  "K/N: run the K-th of N deterministic slices (merge them with `merge`)");
  cmd->add_option("--seed", o->seed, "Seed of the synthetic inputs")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  cmd->add_flag("--dry-run", o->dry_run,
                "Print the plan (problems x kernels x partitions, this shard's points) and an "
                "estimated duration, then exit (no GPU needed)");
  cmd->add_flag("--json", o->json, "With --dry-run: print the plan as JSON");
  cmd->add_option(
         "--sm-count", o->sm_count,
         "With --dry-run: resolve \"auto\" partitions for this many SMs (default 132, an H200's)")
      ->check(CLI::PositiveNumber);
  cmd->callback([o] {
    o->command_line = invocation_text();
    o->tool_version = tool_version();
    o->git_commit = tool_git_commit();
    set_command_exit(run_sweep(*o));
  });
}

}  // namespace mha
