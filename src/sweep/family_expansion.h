// A problem spec that leaves out what picks a kernel family (dtypes, depth, heads, cache, mask,
// sink, soft cap) becomes one problem per compiled family it fits: said, not done silently.
#pragma once

#include <string>
#include <vector>

#include "problems/problem.h"
#include "registry/kernel_registry.h"

namespace mha {

// One line per spec that fits more than one compiled family: its origin, the fields it leaves
// out, and how many families it expands into.
std::vector<std::string> family_expansion_notes(const std::vector<ProblemSpec>& specs,
                                                const std::vector<const KernelEntry*>& kernels);

}  // namespace mha
