// Which specs expand into several kernel families, and why.
#include "sweep/family_expansion.h"

#include <fmt/format.h>

#include <set>

#include "defaults/defaults_table.h"

namespace mha {

namespace {

// The family fields a spec leaves to the kernel.
std::string missing_fields(const ProblemSpec& s) {
  std::string out;
  auto add = [&](bool absent, const char* name) {
    if (absent) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  add(!s.dtype, "dtype");
  add(!s.out_dtype, "out_dtype");
  add(!s.kv_dtype, "kv_dtype");
  add(!s.depth, "depth");
  add(!s.heads || !s.kv_heads, "heads/kv_heads");
  add(!s.kv, "kv");
  add(!s.mask, "mask");
  add(!s.sink, "sink");
  add(!s.soft_cap, "soft_cap");
  return out;
}

std::string family_of(const KernelTraits& t) {
  return family_name(dtype_key(t.dtype, t.kv_dtype, t.soft_cap, t.multi_token), t.depth, t.group,
                     t.kv, t.mask, t.has_sink) +
         "_o" + t.out_dtype;
}

}  // namespace

std::vector<std::string> family_expansion_notes(const std::vector<ProblemSpec>& specs,
                                                const std::vector<const KernelEntry*>& kernels) {
  std::vector<std::string> notes;
  for (const ProblemSpec& spec : specs) {
    std::set<std::string> families;
    for (const KernelEntry* k : kernels) {
      std::string why;
      if (!instantiate(spec, k->traits, &why).empty()) families.insert(family_of(k->traits));
    }
    if (families.size() > 1)
      notes.push_back(fmt::format(
          "note: {} leaves out {}: one problem for each of the {} compiled families it fits "
          "(name them to pick one)",
          spec.origin, missing_fields(spec), families.size()));
  }
  return notes;
}

}  // namespace mha
