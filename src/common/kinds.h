// The kinds problems and kernels are named by, with their one name table. The strings are how
// configs, reports and kernel names spell them; code asks these functions instead of comparing
// strings, so a new kind is one row here.
#pragma once

#include <string>
#include <vector>

#include "kernels/masks.cuh"  // MaskKind

namespace mha {

enum class Dtype { kBf16, kFp16, kFp32, kE4m3, kE5m2 };
enum class KvKind { kContig, kPaged, kPagedHnd };

// Throw std::invalid_argument naming the value and the known names.
Dtype dtype_from_name(const std::string& name);
KvKind kv_from_name(const std::string& name);
MaskKind mask_from_name(const std::string& name);

const char* name_of(Dtype d);
const char* name_of(KvKind k);
const char* name_of(MaskKind m);

// The names in table order (for messages and config choices).
std::vector<std::string> dtype_names();
std::vector<std::string> q_dtype_names();    // what q (and a 16-bit cache) may be: bf16, fp16
std::vector<std::string> out_dtype_names();  // bf16, fp16, fp32
std::vector<std::string> kv_dtype_names();   // bf16, fp16, e4m3, e5m2
std::vector<std::string> kv_names();
std::vector<std::string> mask_names();

// Bytes of one element of a q/K/V or output dtype.
int element_bytes(Dtype d);
inline int element_bytes(const std::string& dtype) { return element_bytes(dtype_from_name(dtype)); }

inline bool is_fp8(Dtype d) { return d == Dtype::kE4m3 || d == Dtype::kE5m2; }
inline bool is_fp8(const std::string& dtype) { return is_fp8(dtype_from_name(dtype)); }
// Largest finite value of an fp8 format (what a quantisation scale maps the data's range onto).
float fp8_max(Dtype d);

inline bool is_paged(const std::string& kv) { return kv_from_name(kv) != KvKind::kContig; }

}  // namespace mha
