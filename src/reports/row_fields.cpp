// The table of row_fields.h. Each entry names a member once; the macros only spell out the
// getter and setter of its type.
#include "reports/row_fields.h"

#include "api/split_plan.h"

namespace mha {

namespace {

#define MHA_FIELD(object, key, column, kind, type, member, optional)                  \
  RowField {                                                                          \
    object, key, column, FieldKind::kind,                                             \
        [](const ResultRow& r) -> FieldValue { return static_cast<type>(r.member); }, \
        [](ResultRow& r, const FieldValue& v) {                                       \
          r.member = static_cast<decltype(r.member)>(std::get<type>(v));              \
        },                                                                            \
        optional                                                                      \
  }
#define MHA_INT(object, key, column, member) \
  MHA_FIELD(object, key, column, kInt, long long, member, false)
#define MHA_DOUBLE(object, key, column, member) \
  MHA_FIELD(object, key, column, kDouble, double, member, false)
#define MHA_STRING(object, key, column, member) \
  MHA_FIELD(object, key, column, kString, std::string, member, false)
#define MHA_BOOL(object, key, column, member) \
  MHA_FIELD(object, key, column, kBool, bool, member, false)
#define MHA_INT_ADDED_LATER(object, key, column, member) \
  MHA_FIELD(object, key, column, kInt, long long, member, true)
#define MHA_DOUBLE_ADDED_LATER(object, key, column, member) \
  MHA_FIELD(object, key, column, kDouble, double, member, true)
#define MHA_STRING_ADDED_LATER(object, key, column, member) \
  MHA_FIELD(object, key, column, kString, std::string, member, true)
#define MHA_BOOL_ADDED_LATER(object, key, column, member) \
  MHA_FIELD(object, key, column, kBool, bool, member, true)

RowField omitted_at_default(RowField f) {
  f.omitted_at_default = true;
  return f;
}

std::vector<RowField> make_row_fields() {
  return {
      MHA_STRING("", "kernel", "kernel", kernel),
      MHA_STRING("traits", "dtype", "dtype", traits.dtype),
      MHA_STRING("traits", "out_dtype", "out_dtype", traits.out_dtype),
      // fp8 caches and soft-capping came later: reports without them hold neither.
      MHA_STRING_ADDED_LATER("traits", "kv_dtype", "kv_dtype", traits.kv_dtype),
      MHA_BOOL_ADDED_LATER("traits", "soft_cap", "soft_cap", traits.soft_cap),
      // Several query tokens came later still: reports without them hold single-token rows.
      omitted_at_default(
          MHA_BOOL_ADDED_LATER("traits", "multi_token", "multi_token", traits.multi_token)),
      MHA_INT("traits", "depth", "depth", traits.depth),
      MHA_INT("traits", "group", "group", traits.group),
      MHA_STRING("traits", "kv", "kv", traits.kv),
      MHA_STRING("traits", "mask", "mask", traits.mask),
      MHA_BOOL("traits", "has_sink", "has_sink", traits.has_sink),
      MHA_INT("traits", "bm", "bm", traits.bm),
      MHA_INT("traits", "bn", "bn", traits.bn),
      MHA_INT("traits", "bk", "bk", traits.bk),
      MHA_INT("traits", "wm", "wm", traits.wm),
      MHA_INT("traits", "wn", "wn", traits.wn),
      MHA_INT("traits", "threads", "threads", traits.threads),
      MHA_INT("traits", "stages", "stages", traits.stages),
      MHA_BOOL("traits", "warp_split_k", "warp_split_k", traits.warp_split_k),
      MHA_INT("traits", "smem_bytes", "smem_bytes", traits.smem_bytes),
      // The problem's types and kinds equal the kernel's (a kernel computes only its family),
      // so the CSV keeps them once, in the traits' columns.
      MHA_STRING("problem", "name", "problem", problem.name),
      MHA_INT("problem", "batch", "batch", problem.batch),
      MHA_INT("problem", "heads", "heads", problem.heads),
      MHA_INT("problem", "kv_heads", "kv_heads", problem.kv_heads),
      MHA_INT("problem", "depth", nullptr, problem.depth),
      MHA_STRING("problem", "dtype", nullptr, problem.dtype),
      MHA_STRING("problem", "out_dtype", nullptr, problem.out_dtype),
      MHA_STRING_ADDED_LATER("problem", "kv_dtype", nullptr, problem.kv_dtype),
      MHA_STRING_ADDED_LATER("problem", "kv_scale", "kv_scale", problem.kv_scale),
      MHA_DOUBLE_ADDED_LATER("problem", "soft_cap", "soft_cap_value", problem.soft_cap),
      MHA_STRING("problem", "kv", nullptr, problem.kv),
      MHA_INT("problem", "page_size", "page_size", problem.page_size),
      MHA_STRING("problem", "mask", nullptr, problem.mask),
      MHA_INT("problem", "window", "window", problem.window),
      MHA_INT("problem", "chunk", "chunk", problem.chunk),
      omitted_at_default(
          MHA_INT_ADDED_LATER("problem", "tree_depth", "tree_depth", problem.tree_depth)),
      MHA_BOOL("problem", "has_sink", nullptr, problem.has_sink),
      MHA_INT("problem", "keys", "keys", problem.keys),
      omitted_at_default(MHA_INT_ADDED_LATER("problem", "q_len", "q_len", problem.q_len)),
      MHA_STRING("problem", "lengths", "lengths", problem.lengths),
      // The split's one text form ("16", "plan2x128", "cluster4") is what a reader takes; its
      // integer code is written beside it and read from reports that have no text form.
      MHA_FIELD("", "partitions", "partitions", kInt, long long, partitions, true),
      {"", "split", "split", FieldKind::kString,
       [](const ResultRow& r) -> FieldValue { return split_label(r.partitions); },
       [](ResultRow& r, const FieldValue& v) {
         r.partitions = parse_split_label(std::get<std::string>(v));
       },
       true},
      {"", "status", "status", FieldKind::kString,
       [](const ResultRow& r) -> FieldValue { return std::string(status_name(r.status)); },
       [](ResultRow& r, const FieldValue& v) {
         r.status = status_from_name(std::get<std::string>(v));
       },
       false},
      MHA_STRING("", "reason", "reason", reason),
      MHA_DOUBLE("time", "median_us", "median_us", time.median_us),
      MHA_DOUBLE("time", "min_us", "min_us", time.min_us),
      MHA_DOUBLE("time", "mean_us", "mean_us", time.mean_us),
      MHA_DOUBLE("time", "stdev_us", "stdev_us", time.stdev_us),
      MHA_DOUBLE_ADDED_LATER("time", "q1_us", "q1_us", time.q1_us),
      MHA_DOUBLE_ADDED_LATER("time", "q3_us", "q3_us", time.q3_us),
      MHA_INT("time", "samples", "samples", time.samples),
      MHA_DOUBLE("", "bytes", "bytes", bytes),
      MHA_DOUBLE("", "achieved_gbps", "achieved_gbps", achieved_gbps),
      MHA_DOUBLE("", "peak_fraction", "peak_fraction", peak_fraction),
      MHA_DOUBLE_ADDED_LATER("", "floor_us", "floor_us", floor_us),
      {"", "time_over_floor", "time_over_floor", FieldKind::kDouble,
       [](const ResultRow& r) -> FieldValue {
         return r.floor_us > 0 ? r.time.median_us / r.floor_us : 0.0;
       },
       nullptr, false},
      MHA_DOUBLE_ADDED_LATER("", "plan_us", "plan_us", plan_us),
      MHA_DOUBLE("", "rel_l2_error", "rel_l2_error", rel_l2_error),
      MHA_DOUBLE("", "max_abs_error", "max_abs_error", max_abs_error),
      MHA_DOUBLE("", "sm_clock_mhz", "sm_clock_mhz", sm_clock_mhz),
      MHA_BOOL("", "throttled", "throttled", throttled),
      MHA_INT("", "device", "device", device),
  };
}

#undef MHA_BOOL_ADDED_LATER
#undef MHA_STRING_ADDED_LATER
#undef MHA_DOUBLE_ADDED_LATER
#undef MHA_INT_ADDED_LATER
#undef MHA_BOOL
#undef MHA_STRING
#undef MHA_DOUBLE
#undef MHA_INT
#undef MHA_FIELD

}  // namespace

const std::vector<RowField>& row_fields() {
  static const std::vector<RowField> fields = make_row_fields();
  return fields;
}

}  // namespace mha
