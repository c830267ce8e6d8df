// Selecting registered kernels by glob filters over their procedural names.
#pragma once

#include <string>
#include <vector>

#include "registry/kernel_registry.h"

namespace mha {

// How --filter matches, for every command's --help (README says the same).
constexpr const char* kFilterHelp =
    "Glob (fnmatch: * ? [..], case-sensitive) over whole kernel names; repeatable or "
    "comma-separated. A kernel is kept when it matches any glob and no glob prefixed with '-' "
    "(e.g. '*_bn64_*,-*_wsk'). Fails (exit 2) when nothing matches";

// `globs` as given (each may hold several, comma-separated); a name matches when it matches one
// positive glob (or there is none) and no '-' glob.
bool name_matches(const std::string& name, const std::vector<std::string>& globs);
// Prints "--filter ...: N of M kernel(s) match" to stderr when there are filters (stdout stays
// clean for --json); throws UsageError when nothing matches or a glob is empty.
std::vector<const KernelEntry*> select_kernels(const std::vector<std::string>& globs);

}  // namespace mha
