// `mha-tune schema report|config [--out F]`: the JSON Schema of a sweep report or of a config,
// generated from the tool's own field table and the generator's schema (json_schema.h).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/errors.h"
#include "reports/json_schema.h"
#include "reports/report_json.h"

namespace mha {

void add_schema_command(CLI::App& app) {
  struct Args {
    std::string kind, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "schema", "Print the JSON Schema of a sweep report or of a config (draft 2020-12)");
  cmd->add_option("kind", args->kind, "report or config")
      ->required()
      ->check(CLI::IsMember({"report", "config"}));
  cmd->add_option("--out", args->out, "Write it to this file instead of stdout");
  cmd->callback([args] {
    const std::string text =
        (args->kind == "report" ? report_json_schema() : config_json_schema()).dump(2) + "\n";
    if (args->out.empty())
      std::fputs(text.c_str(), stdout);
    else
      write_text_file_atomic(args->out, text);
    set_command_exit(kExitOk);
  });
}

}  // namespace mha
