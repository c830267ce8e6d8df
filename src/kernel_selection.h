// Selecting registered kernels by glob filters over their procedural names.
#pragma once

#include <string>
#include <vector>

#include "kernel_registry.h"

namespace mha {

bool name_matches(const std::string& name, const std::vector<std::string>& globs);
// Throws UsageError when nothing matches (naming the filters and how many kernels exist).
std::vector<const KernelEntry*> select_kernels(const std::vector<std::string>& globs);

}  // namespace mha
