// The name table of kinds.h.
#include "common/kinds.h"

#include <stdexcept>

namespace mha {

namespace {

template <class E>
struct Named {
  E value;
  const char* name;
};

constexpr Named<Dtype> kDtypes[] = {{Dtype::kBf16, "bf16"},
                                    {Dtype::kFp16, "fp16"},
                                    {Dtype::kFp32, "fp32"},
                                    {Dtype::kE4m3, "e4m3"},
                                    {Dtype::kE5m2, "e5m2"}};
constexpr Named<KvKind> kKvKinds[] = {
    {KvKind::kContig, "contig"}, {KvKind::kPaged, "paged"}, {KvKind::kPagedHnd, "paged_hnd"}};
constexpr Named<MaskKind> kMasks[] = {{MaskKind::kNull, "null"},
                                      {MaskKind::kCausal, "causal"},
                                      {MaskKind::kWindow, "window"},
                                      {MaskKind::kChunked, "chunked"},
                                      {MaskKind::kTree, "tree"}};

template <class E, size_t N>
E from_name(const Named<E> (&table)[N], const std::string& name, const char* what) {
  std::string known;
  for (const auto& entry : table) {
    if (name == entry.name) return entry.value;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw std::invalid_argument(std::string(what) + " '" + name + "' is not one of " + known);
}

template <class E, size_t N>
const char* to_name(const Named<E> (&table)[N], E value) {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return "?";
}

template <class E, size_t N>
std::vector<std::string> names(const Named<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.push_back(entry.name);
  return out;
}

}  // namespace

Dtype dtype_from_name(const std::string& name) { return from_name(kDtypes, name, "dtype"); }
KvKind kv_from_name(const std::string& name) { return from_name(kKvKinds, name, "kv"); }
MaskKind mask_from_name(const std::string& name) { return from_name(kMasks, name, "mask"); }

const char* name_of(Dtype d) { return to_name(kDtypes, d); }
const char* name_of(KvKind k) { return to_name(kKvKinds, k); }
const char* name_of(MaskKind m) { return to_name(kMasks, m); }

std::vector<std::string> dtype_names() { return names(kDtypes); }
std::vector<std::string> kv_names() { return names(kKvKinds); }
std::vector<std::string> q_dtype_names() { return {"bf16", "fp16"}; }
std::vector<std::string> out_dtype_names() { return {"bf16", "fp16", "fp32"}; }
std::vector<std::string> kv_dtype_names() { return {"bf16", "fp16", "e4m3", "e5m2"}; }
std::vector<std::string> mask_names() { return names(kMasks); }

int element_bytes(Dtype d) { return d == Dtype::kFp32 ? 4 : is_fp8(d) ? 1 : 2; }

float fp8_max(Dtype d) {
  if (d == Dtype::kE4m3) return 448.f;
  if (d == Dtype::kE5m2) return 57344.f;
  throw std::invalid_argument(std::string("fp8_max: ") + name_of(d) + " is not an fp8 format");
}

}  // namespace mha
