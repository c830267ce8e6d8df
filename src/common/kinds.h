// The kinds problems and kernels are named by, with their one name table. The strings are how
// configs, reports and kernel names spell them; code asks these functions instead of comparing
// strings, so a new kind is one row here.
#pragma once

#include <string>
#include <vector>

#include "masks.cuh"  // MaskKind

namespace mha {

enum class Dtype { kBf16, kFp16, kFp32 };
enum class KvKind { kContig, kPaged };

// Throw std::invalid_argument naming the value and the known names.
Dtype dtype_from_name(const std::string& name);
KvKind kv_from_name(const std::string& name);
MaskKind mask_from_name(const std::string& name);

const char* name_of(Dtype d);
const char* name_of(KvKind k);
const char* name_of(MaskKind m);

// The names in table order (for messages and config choices).
std::vector<std::string> dtype_names();
std::vector<std::string> kv_names();
std::vector<std::string> mask_names();

// Bytes of one element of a q/K/V or output dtype.
int element_bytes(Dtype d);
inline int element_bytes(const std::string& dtype) { return element_bytes(dtype_from_name(dtype)); }

inline bool is_paged(const std::string& kv) { return kv_from_name(kv) == KvKind::kPaged; }

}  // namespace mha
