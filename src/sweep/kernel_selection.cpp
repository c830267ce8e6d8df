// Glob selection over the kernel registry: positive globs include, '-' globs exclude (the rule
// of gen_dispatch.py's --filter and MHA_KERNEL_FILTER, so one filter means the same everywhere).
#include "sweep/kernel_selection.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <cstdio>
#include <sstream>

#include "common/errors.h"

namespace mha {
namespace {

struct Globs {
  std::vector<std::string> include, exclude;
};

Globs split_globs(const std::vector<std::string>& globs) {
  Globs out;
  for (const auto& text : globs) {
    if (text.empty()) throw UsageError("--filter '': empty glob (write '*' for every kernel)");
    std::stringstream in(text);
    for (std::string g; std::getline(in, g, ',');) {
      const bool is_exclude = !g.empty() && g[0] == '-';
      const std::string glob = is_exclude ? g.substr(1) : g;
      if (glob.empty())
        throw UsageError(
            fmt::format("--filter '{}': empty glob (write '*' for every kernel)", text));
      (is_exclude ? out.exclude : out.include).push_back(glob);
    }
  }
  return out;
}

bool any_match(const std::vector<std::string>& globs, const std::string& name) {
  for (const auto& g : globs)
    if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

}  // namespace

bool name_matches(const std::string& name, const std::vector<std::string>& globs) {
  const Globs g = split_globs(globs);
  return (g.include.empty() || any_match(g.include, name)) && !any_match(g.exclude, name);
}

std::vector<const KernelEntry*> select_kernels(const std::vector<std::string>& globs) {
  std::string list;
  for (const auto& g : globs) list += (list.empty() ? "" : " ") + g;
  const Globs g = split_globs(globs);
  std::vector<const KernelEntry*> out;
  for (const auto& k : kernel_registry())
    if ((g.include.empty() || any_match(g.include, k.name)) && !any_match(g.exclude, k.name))
      out.push_back(&k);
  if (out.empty())
    throw UsageError(fmt::format(
        "--filter {}: matches none of the {} kernels in this build (see `mha-tune list`)", list,
        kernel_registry().size()));
  if (!globs.empty())
    std::fprintf(stderr, "--filter %s: %zu of %zu kernel(s) match\n", list.c_str(), out.size(),
                 kernel_registry().size());
  return out;
}

}  // namespace mha
