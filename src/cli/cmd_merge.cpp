// `mha-tune merge REPORT... --out PREFIX`: joins the reports of a sharded sweep (exit 1 when a
// shard is missing, 2 when the reports are not shards of one sweep on one GPU model).
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "reports/merge.h"

namespace mha {

void add_merge_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("merge",
                         "Merge the JSON reports of a sharded sweep (--shard K/N) into one JSON "
                         "and CSV report; exit 1 "
                         "when a shard is missing, 2 when the reports are not shards of one sweep");
  struct Args {
    std::vector<std::string> reports;
    std::string out;
    bool allow_different_gpu = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("reports", args->reports, "Shard reports (JSON)")->required();
  cmd->add_option("--out", args->out, "Output path prefix: writes PREFIX.json and PREFIX.csv")
      ->required();
  cmd->add_flag("--allow-different-gpu", args->allow_different_gpu,
                "Merge reports measured on different GPU models");
  cmd->callback(
      [args] { set_command_exit(run_merge(args->reports, args->out, args->allow_different_gpu)); });
}

}  // namespace mha
