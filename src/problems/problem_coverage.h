// Which problems of a problem set no compiled kernel serves, and why. A problem that no kernel
// computes must be named, not dropped: else verify and sweep report "0 problem(s)" and pass.
#pragma once

#include <string>
#include <vector>

#include "problems/problem.h"
#include "registry/kernel_registry.h"

namespace mha {

struct UnservedSpec {
  std::string origin;                // the spec as written: --problem "..." or file: problems[i]
  std::vector<std::string> reasons;  // instantiate()'s why_not, distinct, with kernel counts
};

// The specs from which no kernel of `kernels` instantiates a problem, in order.
std::vector<UnservedSpec> unserved_specs(const std::vector<ProblemSpec>& specs,
                                         const std::vector<const KernelEntry*>& kernels);

// Warns on stderr about each spec no kernel serves. When none is served and `has_other_work` is
// false (no built-in suite), nothing would run: throws UsageError naming the specs and reasons.
void check_problem_coverage(const std::vector<ProblemSpec>& specs,
                            const std::vector<const KernelEntry*>& kernels, bool has_other_work);

}  // namespace mha
