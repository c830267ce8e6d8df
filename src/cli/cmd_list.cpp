// `mha-tune list`: the kernels compiled into this build, with their parameters.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "reports/report_json.h"
#include "sweep/kernel_selection.h"

namespace mha {

void add_list_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> filters;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("list", "List the compiled kernels (no GPU needed)");
  cmd->add_option("--filter", opt->filters, kFilterHelp);
  cmd->add_flag("--json", opt->json, "Print JSON instead of a table");
  cmd->callback([opt] {
    const auto kernels = select_kernels(opt->filters);
    if (opt->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto* k : kernels) {
        nlohmann::json entry = to_json_value(k->traits);
        entry["name"] = k->name;
        out.push_back(entry);
      }
      fmt::print("{}\n", out.dump(2));
      return;
    }
    fmt::print("{:<72} {:>4} {:>4} {:>4} {:>4} {:>4} {:>4} {:>5} {:>3} {:>4} {:>8}\n", "kernel",
               "BM", "BN", "BK", "WM", "WN", "thr", "stage", "wsk", "grp", "smem_KiB");
    for (const auto* k : kernels) {
      const auto& t = k->traits;
      fmt::print("{:<72} {:>4} {:>4} {:>4} {:>4} {:>4} {:>4} {:>5} {:>3} {:>4} {:>8.1f}\n", k->name,
                 t.bm, t.bn, t.bk, t.wm, t.wn, t.threads, t.stages, t.warp_split_k ? "y" : "n",
                 t.group, t.smem_bytes / 1024.0);
    }
    fmt::print("{} kernel(s)\n", kernels.size());
  });
}

}  // namespace mha
