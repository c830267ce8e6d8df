// `mha-tune list`: the kernels compiled into this build, with their parameters.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "kernel_selection.h"

namespace mha {

void add_list_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> filters;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("list", "List the compiled kernels (no GPU needed)");
  cmd->add_option("--filter", opt->filters, "Glob over kernel names (repeatable)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of a table");
  cmd->callback([opt] {
    const auto kernels = select_kernels(opt->filters);
    if (opt->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto* k : kernels) {
        const auto& t = k->traits;
        out.push_back({{"name", k->name}, {"dtype", t.dtype}, {"out_dtype", t.out_dtype},
                       {"depth", t.depth}, {"group", t.group}, {"kv", t.kv}, {"mask", t.mask},
                       {"sink", t.has_sink}, {"bm", t.bm}, {"bn", t.bn}, {"bk", t.bk},
                       {"wm", t.wm}, {"wn", t.wn}, {"threads", t.threads}, {"stages", t.stages},
                       {"warp_split_k", t.warp_split_k}, {"smem_bytes", t.smem_bytes}});
      }
      fmt::print("{}\n", out.dump(2));
      return;
    }
    fmt::print("{:<72} {:>4} {:>4} {:>4} {:>4} {:>4} {:>4} {:>5} {:>3} {:>4} {:>8}\n", "kernel", "BM",
               "BN", "BK", "WM", "WN", "thr", "stage", "wsk", "grp", "smem_KiB");
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
