// `mha-tune select REPORT...`: defaults per shape bucket and a fitted partition rule, as JSON and
// as a C++ header for a kernel library.
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "select.h"

namespace mha {

void add_select_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "select", "Choose defaults (tile, partitions) per shape bucket from sweep reports");
  struct Args {
    std::vector<std::string> reports;
    std::string out_json, out_header;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("reports", args->reports, "Sweep reports (JSON) from one GPU model")->required();
  cmd->add_option("--out-json", args->out_json, "Write the defaults, rule and cost as JSON");
  cmd->add_option("--out-header", args->out_header,
                  "Write a C++17 header (mha_tune_defaults.h) with the table and select_config");
  cmd->callback(
      [args] { set_command_exit(run_select(args->reports, args->out_json, args->out_header)); });
}

}  // namespace mha
