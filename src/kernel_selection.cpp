// Glob selection over the kernel registry.
#include "kernel_selection.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include "errors.h"

namespace mha {

bool name_matches(const std::string& name, const std::vector<std::string>& globs) {
  if (globs.empty()) return true;
  for (const auto& g : globs)
    if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

std::vector<const KernelEntry*> select_kernels(const std::vector<std::string>& globs) {
  std::vector<const KernelEntry*> out;
  for (const auto& k : kernel_registry())
    if (name_matches(k.name, globs)) out.push_back(&k);
  if (out.empty()) {
    std::string list;
    for (const auto& g : globs) list += (list.empty() ? "" : " ") + g;
    throw UsageError(fmt::format("--filter {}: matches none of the {} kernels in this build (see `mha-tune list`)",
                                 list, kernel_registry().size()));
  }
  return out;
}

}  // namespace mha
