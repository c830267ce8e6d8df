// `mha-tune compare BASELINE CANDIDATE`: the CI regression gate (exit 1 on a regression).
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/errors.h"
#include "defaults/defaults_table.h"
#include "reports/compare.h"
#include "reports/noise_floor.h"
#include "reports/report_json.h"
#include "reports/samples_file.h"

namespace mha {

void add_compare_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two JSON reports; exit 1 on a regression (slower beyond the threshold and noise, "
      "passed -> not passed, a baseline point missing from the candidate) or when no pair "
      "matched, 2 on unusable input (incl. reports from different GPUs or measured differently)");
  struct Args {
    std::string baseline, candidate, csv, markdown, noise, defaults, gate = "points";
    bool samples = false;
    CompareOptions options;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("baseline", args->baseline, "Baseline report (JSON)")->required();
  cmd->add_option("candidate", args->candidate, "Candidate report (JSON)")->required();
  cmd->add_option("--threshold", args->options.threshold,
                  "Smallest relative median change called slower/faster (default 0.03)");
  cmd->add_option("--csv", args->csv, "Write every pair to this CSV file");
  cmd->add_option("--gate", args->gate,
                  "What fails: points (any point slower or broken, default), best (a problem's "
                  "best point slower or gone: for an A/B of a kernel change) or default (the "
                  "point --defaults chooses slower or gone)")
      ->check(CLI::IsMember({"points", "best", "default"}));
  cmd->add_option("--defaults", args->defaults,
                  "A defaults table (select --out-defaults): judge the point it chooses for each "
                  "problem too; --gate default fails on those only");
  cmd->add_option("--markdown", args->markdown, "Also write the markdown summary to this file");
  cmd->add_flag("--allow-different-gpu", args->options.allow_different_gpu,
                "Compare reports from different GPU models");
  cmd->add_flag("--allow-missing", args->options.allow_missing,
                "Baseline points missing from the candidate are not regressions (a filtered or "
                "sharded candidate); no matched pair at all still fails");
  cmd->add_flag("--allow-method-mismatch", args->options.allow_method_mismatch,
                "Compare reports measured differently (timing_mode, cold_cache, reduce_mode)");
  cmd->add_option("--noise", args->noise,
                  "Cross-machine noise floor (`mha-tune noise`): changes within it are not "
                  "regressions");
  cmd->add_flag("--samples", args->samples,
                "Test each pair's shift with its samples (the sidecars `sweep --samples` wrote "
                "beside both reports, PREFIX.samples.jsonl): a move they do not confirm is "
                "ambiguous, not a regression");
  cmd->add_option("--alpha", args->options.alpha,
                  "Significance of the rank test with --samples (default 0.01)")
      ->check(CLI::Range(1e-12, 0.5));
  cmd->callback([args] {
    if (args->samples) {
      args->options.baseline_samples =
          std::make_shared<SamplesByPoint>(read_samples_file(samples_path_for(args->baseline)));
      args->options.candidate_samples =
          std::make_shared<SamplesByPoint>(read_samples_file(samples_path_for(args->candidate)));
    }
    args->options.gate = args->gate == "best"      ? CompareOptions::Gate::kBest
                         : args->gate == "default" ? CompareOptions::Gate::kDefault
                                                   : CompareOptions::Gate::kPoints;
    if (!args->defaults.empty()) {
      try {
        args->options.defaults = std::make_shared<DefaultsTable>(defaults_from_json_text(
            read_text_file(args->defaults, "the defaults table"), args->defaults));
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--defaults: ") + e.what());
      }
    }
    if (!args->noise.empty())
      args->options.noise_floor = std::make_shared<NoiseFloor>(read_noise_floor(args->noise));
    set_command_exit(
        run_compare(args->baseline, args->candidate, args->options, args->csv, args->markdown));
  });
}

}  // namespace mha
