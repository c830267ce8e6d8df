// CSV report writer with RFC 4180 quoting.
#include "report_csv.h"

#include <fmt/format.h>

#include "report_json.h"
#include "split_plan.h"

namespace mha {

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_escape(fields[i]);
  }
  line += '\n';
  return line;
}

std::vector<std::string> report_csv_columns() {
  return {"kernel",
          "dtype",
          "out_dtype",
          "depth",
          "group",
          "kv",
          "mask",
          "sink",
          "bm",
          "bn",
          "bk",
          "wm",
          "wn",
          "threads",
          "stages",
          "warp_split_k",
          "smem_bytes",
          "problem",
          "batch",
          "heads",
          "kv_heads",
          "page_size",
          "window",
          "chunk",
          "keys",
          "lengths",
          "partitions",
          "split",
          "status",
          "reason",
          "median_us",
          "min_us",
          "mean_us",
          "stdev_us",
          "samples",
          "bytes",
          "gbps",
          "peak_fraction",
          "floor_us",
          "time_over_floor",
          "plan_us",
          "rel_l2_error",
          "max_abs_error",
          "sm_clock_mhz",
          "throttled",
          "device"};
}

std::vector<std::string> report_csv_fields(const ResultRow& r) {
  auto i = [](long long v) { return std::to_string(v); };
  auto b = [](bool v) { return std::string(v ? "1" : "0"); };
  auto d = [](double v) { return fmt::format("{}", v); };
  const KernelTraits& t = r.traits;
  const ProblemShape& p = r.problem;
  return {r.kernel,
          t.dtype,
          t.out_dtype,
          i(t.depth),
          i(t.group),
          t.kv,
          t.mask,
          b(t.has_sink),
          i(t.bm),
          i(t.bn),
          i(t.bk),
          i(t.wm),
          i(t.wn),
          i(t.threads),
          i(t.stages),
          b(t.warp_split_k),
          i(t.smem_bytes),
          p.name,
          i(p.batch),
          i(p.heads),
          i(p.kv_heads),
          i(p.page_size),
          i(p.window),
          i(p.chunk),
          i(p.keys),
          p.lengths,
          i(r.partitions),
          split_label(r.partitions),
          status_name(r.status),
          r.reason,
          d(r.time.median_us),
          d(r.time.min_us),
          d(r.time.mean_us),
          d(r.time.stdev_us),
          i(r.time.samples),
          d(r.bytes),
          d(r.achieved_gbps),
          d(r.peak_fraction),
          d(r.floor_us),
          d(r.floor_us > 0 ? r.time.median_us / r.floor_us : 0.0),
          d(r.plan_us),
          d(r.rel_l2_error),
          d(r.max_abs_error),
          d(r.sm_clock_mhz),
          b(r.throttled),
          i(r.device)};
}

std::string report_to_csv(const std::vector<ResultRow>& rows) {
  std::string text = csv_line(report_csv_columns());
  for (const ResultRow& r : rows) text += csv_line(report_csv_fields(r));
  return text;
}

void write_report_csv(const std::string& path, const std::vector<ResultRow>& rows) {
  write_text_file_atomic(path, report_to_csv(rows));
}

}  // namespace mha
