// The kernel and problem selection that verify, sweep and phases share.
#include "cli/commands.h"
#include "sweep/kernel_selection.h"

namespace mha {

void add_selection_options(CLI::App* cmd, std::vector<std::string>& filters,
                           std::vector<std::string>& problem_specs, std::string& problems_file,
                           const std::string& problem_example) {
  cmd->add_option("--filter", filters, kFilterHelp);
  cmd->add_option("--problem", problem_specs,
                  "Inline problem (repeatable), e.g. \"" + problem_example + "\"");
  cmd->add_option("--problems", problems_file, "JSON problem file ({\"problems\": [...]})");
}

}  // namespace mha
