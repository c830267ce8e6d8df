// Problems no kernel serves: the reasons kernel_matches() gives, grouped, for verify and sweep.
#include "problems/problem_coverage.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "common/errors.h"

namespace mha {

std::vector<UnservedSpec> unserved_specs(const std::vector<ProblemSpec>& specs,
                                         const std::vector<const KernelEntry*>& kernels) {
  std::vector<UnservedSpec> out;
  for (const ProblemSpec& spec : specs) {
    std::map<std::string, int> reasons;  // sorted, so the message is stable
    bool served = false;
    for (const KernelEntry* k : kernels) {
      std::string why;
      if (!instantiate(spec, k->traits, &why).empty()) {
        served = true;
        break;
      }
      ++reasons[why.empty() ? "no problem" : why];
    }
    if (served) continue;
    UnservedSpec u{spec.origin, {}};
    for (const auto& [why, count] : reasons)
      u.reasons.push_back(fmt::format("{} ({} kernel{})", why, count, count == 1 ? "" : "s"));
    out.push_back(u);
  }
  return out;
}

void check_problem_coverage(const std::vector<ProblemSpec>& specs,
                            const std::vector<const KernelEntry*>& kernels, bool has_other_work) {
  const std::vector<UnservedSpec> unserved = unserved_specs(specs, kernels);
  std::string lines;
  for (const UnservedSpec& u : unserved) {
    std::string reasons;
    for (const auto& r : u.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
    lines += fmt::format("\n  {}: {}", u.origin, reasons);
  }
  if (!has_other_work && !specs.empty() && unserved.size() == specs.size())
    throw UsageError(fmt::format(
        "no compiled kernel serves any of the {} problem(s), so nothing would run (this build's "
        "{} selected kernel(s) come from {}; see `mha-tune list`):{}",
        specs.size(), kernels.size(), built_config_label(), lines));
  if (!unserved.empty())
    std::fputs(fmt::format("warning: no compiled kernel serves {} of the {} problem(s); they are "
                           "skipped:{}\n",
                           unserved.size(), specs.size(), lines)
                   .c_str(),
               stderr);
}

}  // namespace mha
