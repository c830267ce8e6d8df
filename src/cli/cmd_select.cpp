// `mha-tune select REPORT...`: defaults per shape bucket and a fitted partition rule, as JSON and
// as a C++ header for a kernel library.
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "errors.h"
#include "select.h"

namespace mha {

void add_select_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "select", "Choose defaults (tile, partitions) per shape bucket from sweep reports");
  struct Args {
    std::vector<std::string> reports;
    std::string out_json, out_header, model = "corrected";
    SelectExtras extras;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("reports", args->reports, "Sweep reports (JSON) from one GPU model")->required();
  // --evaluate takes the reports after it: the training reports come first.
  cmd->add_option("--out-json", args->out_json, "Write the defaults, rule and cost as JSON");
  cmd->add_option("--out-header", args->out_header,
                  "Write a C++17 header (mha_tune_defaults.h) with the table and select_config");
  cmd->add_option("--evaluate", args->extras.evaluate_paths,
                  "Held-out sweep reports: price the defaults fitted on REPORTS on their problems "
                  "(chosen point, its time, the best, the ratio; by kind and by batch)");
  cmd->add_option("--json", args->extras.evaluation_json, "With --evaluate: write the evaluation as JSON");
  cmd->add_option("--model", args->model,
                  "Time model for unmeasured shapes: corrected (default: the analytic fit times its "
                  "errors on nearby measured shapes) or analytic")
      ->check(CLI::IsMember({"corrected", "analytic"}));
  cmd->callback([args] {
    args->extras.corrects_residuals = args->model == "corrected";
    if (!args->extras.evaluation_json.empty() && args->extras.evaluate_paths.empty())
      throw UsageError("select --json: needs --evaluate (the evaluation is what it writes)");
    set_command_exit(run_select(args->reports, args->out_json, args->out_header, args->extras));
  });
}

}  // namespace mha
