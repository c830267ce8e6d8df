// `mha-tune select REPORT...`: defaults per shape bucket and a fitted partition rule, as JSON and
// as a C++ header for a kernel library.
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/errors.h"
#include "reports/select.h"

namespace mha {

void add_select_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "select", "Choose defaults (tile, partitions) per shape bucket from sweep reports");
  struct Args {
    std::vector<std::string> reports;
    std::string out_json, model = "corrected";
    SelectExtras extras;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("reports", args->reports,
                  "Sweep reports (JSON) from one GPU model (none: --suggest's seeds only)");
  // --evaluate takes the reports after it: the training reports come first.
  cmd->add_option("--out-json", args->out_json, "Write the defaults, rule and cost as JSON");
  cmd->add_option("--out-defaults", args->extras.out_defaults,
                  "Write the defaults table the library loads at run time (per family, a kernel "
                  "and split every half octave of batch x KV heads and of keys)");
  cmd->add_option("--evaluate", args->extras.evaluate_paths,
                  "Held-out sweep reports: price the defaults fitted on REPORTS on their problems "
                  "(chosen point, its time, the best, the ratio; by kind and by batch)");
  cmd->add_option("--json", args->extras.evaluation_json,
                  "With --evaluate: write the evaluation as JSON");
  cmd->add_option(
         "--model", args->model,
         "Time model for unmeasured shapes: corrected (default: the analytic fit times its "
         "errors on nearby measured shapes) or analytic")
      ->check(CLI::IsMember({"corrected", "analytic"}));
  cmd->add_flag(
      "--evaluate-training-problems", args->extras.prices_training_problems,
      "With --evaluate: also price problems REPORTS measured (defaults from a sample of a "
      "sweep's points against the whole sweep)");
  cmd->add_option("--suggest", args->extras.suggest,
                  "Write the next N points to measure (seeds for tiles the time model cannot fit "
                  "yet, then each problem's best-predicted points) for `sweep --points`")
      ->check(CLI::Range(1, 10000000));
  cmd->add_option(
      "--candidates", args->extras.candidates_path,
      "With --suggest: the points to choose from (`sweep --dry-run --json` or a report)");
  cmd->add_option("--out-points", args->extras.out_points, "With --suggest: where to write them");
  cmd->callback([args] {
    const bool suggests = args->extras.suggest > 0;
    if (suggests != !args->extras.candidates_path.empty() ||
        suggests != !args->extras.out_points.empty())
      throw UsageError("select --suggest N, --candidates FILE and --out-points FILE go together");
    if (args->reports.empty() && !suggests)
      throw UsageError("select: REPORTS: at least one sweep report (or --suggest for seeds)");
    args->extras.corrects_residuals = args->model == "corrected";
    if (!args->extras.evaluation_json.empty() && args->extras.evaluate_paths.empty())
      throw UsageError("select --json: needs --evaluate (the evaluation is what it writes)");
    set_command_exit(run_select(args->reports, args->out_json, args->extras));
  });
}

}  // namespace mha
