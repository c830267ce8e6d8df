// JSON form of rows, metadata and reports; strict reading with file-and-key messages.
#include "report_json.h"
#include "split_plan.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include "errors.h"
#include "json_strict.h"

namespace mha {

using nlohmann::json;

namespace {

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// "<file>: rows[3]" + "keys" -> "<file>: rows[3].keys"; "<file>:" + "rows" -> "<file>: rows".
std::string key_path(const std::string& where, const std::string& key) {
  if (!where.empty() && where.back() == ':') return where + " " + key;
  return where + "." + key;
}

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& what) {
  throw UsageError(key_path(where, key) + ": " + what);
}

const json& field(const json& j, const std::string& where, const std::string& key) {
  if (!j.is_object()) throw UsageError(where + ": expected a JSON object");
  auto it = j.find(key);
  if (it == j.end()) fail(where, key, "missing");
  return *it;
}

std::string get_string(const json& j, const std::string& where, const std::string& key) {
  const json& v = field(j, where, key);
  if (!v.is_string()) fail(where, key, "expected a string, got " + v.dump());
  return v.get<std::string>();
}

double get_double(const json& j, const std::string& where, const std::string& key) {
  const json& v = field(j, where, key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  fail(where, key, "expected a number, got " + v.dump());
}

int get_int(const json& j, const std::string& where, const std::string& key) {
  const json& v = field(j, where, key);
  if (!v.is_number_integer()) fail(where, key, "expected an integer, got " + v.dump());
  // get<int>() would wrap 4294967297 to 1 silently.
  if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(INT32_MAX)
                             : v.get<int64_t>() < INT32_MIN || v.get<int64_t>() > INT32_MAX)
    fail(where, key, "integer " + v.dump() + " is out of range");
  return v.get<int>();
}

uint64_t get_uint64(const json& j, const std::string& where, const std::string& key) {
  const json& v = field(j, where, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    fail(where, key, "expected a non-negative integer, got " + v.dump());
  }
  return v.get<uint64_t>();
}

bool get_bool(const json& j, const std::string& where, const std::string& key) {
  const json& v = field(j, where, key);
  if (!v.is_boolean()) fail(where, key, "expected true or false, got " + v.dump());
  return v.get<bool>();
}

}  // namespace

json tile_to_json(const KernelTraits& t) {
  return json{{"bm", t.bm},
              {"bn", t.bn},
              {"bk", t.bk},
              {"wm", t.wm},
              {"wn", t.wn},
              {"threads", t.threads},
              {"stages", t.stages},
              {"warp_split_k", t.warp_split_k},
              {"smem_bytes", t.smem_bytes}};
}

json to_json_value(const KernelTraits& t) {
  json j = tile_to_json(t);
  j.update(json{{"dtype", t.dtype},
                {"out_dtype", t.out_dtype},
                {"depth", t.depth},
                {"group", t.group},
                {"kv", t.kv},
                {"mask", t.mask},
                {"has_sink", t.has_sink}});
  return j;
}

namespace {

KernelTraits traits_from(const json& j, const std::string& w) {
  KernelTraits t;
  t.dtype = get_string(j, w, "dtype");
  t.out_dtype = get_string(j, w, "out_dtype");
  t.depth = get_int(j, w, "depth");
  t.group = get_int(j, w, "group");
  t.kv = get_string(j, w, "kv");
  t.mask = get_string(j, w, "mask");
  t.has_sink = get_bool(j, w, "has_sink");
  t.bm = get_int(j, w, "bm");
  t.bn = get_int(j, w, "bn");
  t.bk = get_int(j, w, "bk");
  t.wm = get_int(j, w, "wm");
  t.wn = get_int(j, w, "wn");
  t.threads = get_int(j, w, "threads");
  t.stages = get_int(j, w, "stages");
  t.warp_split_k = get_bool(j, w, "warp_split_k");
  t.smem_bytes = get_int(j, w, "smem_bytes");
  return t;
}

json problem_json(const ProblemShape& p) {
  json j{{"name", p.name},           {"batch", p.batch},   {"heads", p.heads},
         {"kv_heads", p.kv_heads},   {"depth", p.depth},   {"dtype", p.dtype},
         {"out_dtype", p.out_dtype}, {"kv", p.kv},         {"page_size", p.page_size},
         {"mask", p.mask},           {"window", p.window}, {"chunk", p.chunk},
         {"has_sink", p.has_sink},   {"keys", p.keys},     {"lengths", p.lengths}};
  // Ragged batches also carry every length and their total, so that reports can be bucketed and
  // split rules priced on the real batch (the name shortens long lists).
  if (!p.ragged_lengths.empty()) {
    j["ragged_lengths"] = p.ragged_lengths;
    j["total_keys"] = std::accumulate(p.ragged_lengths.begin(), p.ragged_lengths.end(), 0LL);
  }
  return j;
}

ProblemShape problem_from(const json& j, const std::string& w) {
  ProblemShape p;
  p.name = get_string(j, w, "name");
  p.batch = get_int(j, w, "batch");
  p.heads = get_int(j, w, "heads");
  p.kv_heads = get_int(j, w, "kv_heads");
  p.depth = get_int(j, w, "depth");
  p.dtype = get_string(j, w, "dtype");
  p.out_dtype = get_string(j, w, "out_dtype");
  p.kv = get_string(j, w, "kv");
  p.page_size = get_int(j, w, "page_size");
  p.mask = get_string(j, w, "mask");
  p.window = get_int(j, w, "window");
  p.chunk = get_int(j, w, "chunk");
  p.has_sink = get_bool(j, w, "has_sink");
  p.keys = get_int(j, w, "keys");
  p.lengths = get_string(j, w, "lengths");
  if (j.contains("ragged_lengths")) {  // added later: optional
    const json& list = j["ragged_lengths"];
    if (!list.is_array() || static_cast<int>(list.size()) != p.batch)
      fail(w, "ragged_lengths", "expected a list of " + std::to_string(p.batch) + " lengths (batch)");
    for (const json& n : list) {
      if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > INT32_MAX)
        fail(w, "ragged_lengths", "expected positive integers, got " + n.dump());
      p.ragged_lengths.push_back(n.get<int>());
    }
  }
  return p;
}

json timing_json(const TimingStats& t) {
  return json{{"median_us", number(t.median_us)},
              {"min_us", number(t.min_us)},
              {"mean_us", number(t.mean_us)},
              {"stdev_us", number(t.stdev_us)},
              {"samples", t.samples}};
}

TimingStats timing_from(const json& j, const std::string& w) {
  TimingStats t;
  t.median_us = get_double(j, w, "median_us");
  t.min_us = get_double(j, w, "min_us");
  t.mean_us = get_double(j, w, "mean_us");
  t.stdev_us = get_double(j, w, "stdev_us");
  t.samples = get_int(j, w, "samples");
  return t;
}

}  // namespace

json to_json_value(const ResultRow& r) {
  return json{{"kernel", r.kernel},
              {"traits", to_json_value(r.traits)},
              {"problem", problem_json(r.problem)},
              {"partitions", r.partitions},
              {"split", split_label(r.partitions)},  // "16", or "plan1x256" (negative partitions)
              {"status", status_name(r.status)},
              {"reason", r.reason},
              {"time", timing_json(r.time)},
              {"bytes", number(r.bytes)},
              {"achieved_gbps", number(r.achieved_gbps)},
              {"peak_fraction", number(r.peak_fraction)},
              {"floor_us", number(r.floor_us)},
              {"time_over_floor", number(r.floor_us > 0 ? r.time.median_us / r.floor_us : 0.0)},
              {"plan_us", number(r.plan_us)},
              {"rel_l2_error", number(r.rel_l2_error)},
              {"max_abs_error", number(r.max_abs_error)},
              {"sm_clock_mhz", number(r.sm_clock_mhz)},
              {"throttled", r.throttled},
              {"device", r.device}};
}

ResultRow row_from_json(const json& j, const std::string& w) {
  ResultRow r;
  r.kernel = get_string(j, w, "kernel");
  r.traits = traits_from(field(j, w, "traits"), w + ".traits");
  r.problem = problem_from(field(j, w, "problem"), w + ".problem");
  r.partitions = get_int(j, w, "partitions");
  const std::string status = get_string(j, w, "status");
  try {
    r.status = status_from_name(status);
  } catch (const std::invalid_argument& e) {
    fail(w, "status", e.what());
  }
  r.reason = get_string(j, w, "reason");
  r.time = timing_from(field(j, w, "time"), w + ".time");
  r.bytes = get_double(j, w, "bytes");
  r.achieved_gbps = get_double(j, w, "achieved_gbps");
  r.peak_fraction = get_double(j, w, "peak_fraction");
  if (j.contains("floor_us")) r.floor_us = get_double(j, w, "floor_us");  // added later
  if (j.contains("plan_us")) r.plan_us = get_double(j, w, "plan_us");      // added with plans
  r.rel_l2_error = get_double(j, w, "rel_l2_error");
  r.max_abs_error = get_double(j, w, "max_abs_error");
  r.sm_clock_mhz = get_double(j, w, "sm_clock_mhz");
  r.throttled = get_bool(j, w, "throttled");
  r.device = get_int(j, w, "device");
  return r;
}

json to_json_value(const RunMetadata& m) {
  return json{{"schema_version", m.schema_version},
              {"tool_version", m.tool_version},
              {"git_commit", m.git_commit},
              {"gpu_name", m.gpu_name},
              {"sm_count", m.sm_count},
              {"sm_clock_max_mhz", number(m.sm_clock_max_mhz)},
              {"mem_clock_max_mhz", number(m.mem_clock_max_mhz)},
              {"l2_bytes", m.l2_bytes},
              {"driver_version", m.driver_version},
              {"cuda_version", m.cuda_version},
              {"timestamp", m.timestamp},
              {"config_file", m.config_file},
              {"config_hash", m.config_hash},
              {"command_line", m.command_line},
              {"peak_read_gbps", number(m.peak_read_gbps)},
              {"seed", m.seed},
              {"timing_mode", m.timing_mode},
              {"reduce_mode", m.reduce_mode},
              {"cold_cache", m.cold_cache},
              {"shard_index", m.shard_index},
              {"shard_count", m.shard_count},
              {"devices", m.devices},
              {"nvidia_driver_version", m.nvidia_driver_version},
              {"gpu_uuids", m.gpu_uuids},
              {"gpu_pci_bus_ids", m.gpu_pci_bus_ids},
              {"wall_time_s", number(m.wall_time_s)}};
}

RunMetadata metadata_from_json(const json& j, const std::string& w) {
  RunMetadata m;
  m.schema_version = get_int(j, w, "schema_version");
  m.tool_version = get_string(j, w, "tool_version");
  m.git_commit = get_string(j, w, "git_commit");
  m.gpu_name = get_string(j, w, "gpu_name");
  m.sm_count = get_int(j, w, "sm_count");
  m.sm_clock_max_mhz = get_double(j, w, "sm_clock_max_mhz");
  m.mem_clock_max_mhz = get_double(j, w, "mem_clock_max_mhz");
  m.l2_bytes = get_int(j, w, "l2_bytes");
  m.driver_version = get_string(j, w, "driver_version");
  m.cuda_version = get_string(j, w, "cuda_version");
  m.timestamp = get_string(j, w, "timestamp");
  m.config_file = get_string(j, w, "config_file");
  m.config_hash = get_string(j, w, "config_hash");
  m.command_line = get_string(j, w, "command_line");
  m.peak_read_gbps = get_double(j, w, "peak_read_gbps");
  m.seed = get_uint64(j, w, "seed");
  m.timing_mode = get_string(j, w, "timing_mode");
  m.cold_cache = get_bool(j, w, "cold_cache");
  // Added with sharded sweeps: optional, so that older reports still load.
  if (j.contains("shard_index")) m.shard_index = get_int(j, w, "shard_index");
  if (j.contains("shard_count")) m.shard_count = get_int(j, w, "shard_count");
  if (j.contains("devices")) m.devices = get_string(j, w, "devices");
  if (j.contains("reduce_mode")) m.reduce_mode = get_string(j, w, "reduce_mode");
  if (j.contains("nvidia_driver_version"))
    m.nvidia_driver_version = get_string(j, w, "nvidia_driver_version");
  if (j.contains("gpu_uuids")) m.gpu_uuids = get_string(j, w, "gpu_uuids");
  if (j.contains("gpu_pci_bus_ids")) m.gpu_pci_bus_ids = get_string(j, w, "gpu_pci_bus_ids");
  if (j.contains("wall_time_s")) m.wall_time_s = get_double(j, w, "wall_time_s");
  return m;
}

json report_to_json(const RunMetadata& meta, const std::vector<ResultRow>& rows) {
  json j_rows = json::array();
  for (const ResultRow& r : rows) j_rows.push_back(to_json_value(r));
  RunMetadata m = meta;
  m.schema_version = kReportSchemaVersion;
  return json{{"schema_version", kReportSchemaVersion},
              {"metadata", to_json_value(m)},
              {"rows", std::move(j_rows)}};
}

Report report_from_json(const json& j, const std::string& file) {
  if (!j.is_object()) throw UsageError(file + ": expected a JSON object at the top level");
  const int version = get_int(j, file + ":", "schema_version");
  if (version != kReportSchemaVersion) {
    throw UsageError(file + ": schema_version: " + std::to_string(version) +
                     " is not supported (this mha-tune reads " +
                     std::to_string(kReportSchemaVersion) + ")");
  }
  Report report;
  report.meta = metadata_from_json(field(j, file + ":", "metadata"), file + ": metadata");
  // Through an iterator: a reference bound to field()'s result with temporary arguments is what
  // g++ 13's -Wdangling-reference warns about.
  const auto rows_it = j.find("rows");
  if (rows_it == j.end()) throw UsageError(file + ": rows: missing");
  const json& rows = *rows_it;
  if (!rows.is_array()) throw UsageError(file + ": rows: expected an array");
  report.rows.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    report.rows.push_back(row_from_json(rows[i], file + ": rows[" + std::to_string(i) + "]"));
  }
  return report;
}

void write_text_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError(path + ": cannot open for writing");
    out << text;
    out.flush();
    if (!out) throw UsageError(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UsageError(path + ": cannot replace the file (rename from " + tmp + " failed)");
  }
}

void write_report_json(const std::string& path, const RunMetadata& meta,
                       const std::vector<ResultRow>& rows) {
  write_text_file_atomic(
      path, report_to_json(meta, rows).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open " + what);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

json read_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_text_file(path, what);
  check_json_strict(text, path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    throw UsageError(path + ": not valid JSON: " + e.what());
  }
}

Report read_report_json(const std::string& path) {
  return report_from_json(read_json_file(path, "the report (missing or unreadable)"), path);
}

}  // namespace mha
