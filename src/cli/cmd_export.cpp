// `mha-tune export --format googlebench REPORT`: a sweep report in another tool's format, for
// dashboards (exit 2 on a malformed or non-sweep report).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/errors.h"
#include "reports/export_googlebench.h"
#include "reports/report_json.h"

namespace mha {

void add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a sweep report in another format: googlebench (Google Benchmark's JSON)");
  struct Args {
    std::string report, format, out;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("report", args->report, "Sweep report (JSON)")->required();
  cmd->add_option("--format", args->format, "Output format: googlebench")
      ->required()
      ->check(CLI::IsMember({"googlebench"}));
  cmd->add_option("--out", args->out, "Write here instead of stdout");
  cmd->callback([args] {
    const Report report = read_report_json(args->report);
    const std::string text = googlebench_json(report, args->report)
                                 .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                             "\n";
    if (args->out.empty())
      fmt::print("{}", text);
    else
      write_text_file_atomic(args->out, text);
    set_command_exit(kExitOk);
  });
}

}  // namespace mha
