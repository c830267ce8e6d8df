// JSON form of rows, metadata and reports; strict reading with file-and-key messages.
#include "reports/report_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <tuple>

#include "common/errors.h"
#include "common/split_code.h"
#include "problems/json_strict.h"
#include "problems/problem.h"
#include "reports/row_fields.h"

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

// Bind its result to a reference only with named arguments: a literal key is a temporary string,
// which g++ 13's -Wdangling-reference reports (an error under -DMHA_WERROR=ON on the H200 machine).
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

namespace {

json field_json(FieldKind kind, const FieldValue& v) {
  switch (kind) {
    case FieldKind::kInt:
      return std::get<long long>(v);
    case FieldKind::kDouble:
      return number(std::get<double>(v));
    case FieldKind::kString:
      return std::get<std::string>(v);
    case FieldKind::kBool:
      return std::get<bool>(v);
  }
  return nullptr;
}

FieldValue field_from(FieldKind kind, const json& j, const std::string& where,
                      const std::string& key) {
  switch (kind) {
    case FieldKind::kInt:
      return static_cast<long long>(get_int(j, where, key));
    case FieldKind::kDouble:
      return get_double(j, where, key);
    case FieldKind::kString:
      return get_string(j, where, key);
    case FieldKind::kBool:
      return get_bool(j, where, key);
  }
  fail(where, key, "unknown field kind");
}

// The fields of one of a row's objects ("traits", "problem", "time") or of the row itself ("").
json fields_json(const ResultRow& r, const std::string& object) {
  static const ResultRow defaults;
  json j = json::object();
  for (const RowField& f : row_fields()) {
    if (f.object != object) continue;
    const FieldValue v = f.get(r);
    if (!f.omitted_at_default || v != f.get(defaults)) j[f.key] = field_json(f.kind, v);
  }
  return j;
}

}  // namespace

json to_json_value(const KernelTraits& t) {
  ResultRow r;
  r.traits = t;
  return fields_json(r, "traits");
}

json tile_to_json(const KernelTraits& t) {
  json j = to_json_value(t);
  for (const char* family : {"dtype", "out_dtype", "kv_dtype", "depth", "group", "kv", "mask",
                             "has_sink", "soft_cap", "multi_token"})
    j.erase(family);
  return j;
}

json to_json_value(const ResultRow& r) {
  json j = fields_json(r, "");
  for (const char* object : {"traits", "problem", "time"}) j[object] = fields_json(r, object);
  // Ragged batches also carry every length and their total, so that reports can be bucketed and
  // split rules priced on the real batch (the name shortens long lists).
  const ProblemShape& p = r.problem;
  if (!p.ragged_lengths.empty()) {
    j["problem"]["ragged_lengths"] = p.ragged_lengths;
    j["problem"]["total_keys"] =
        std::accumulate(p.ragged_lengths.begin(), p.ragged_lengths.end(), 0LL);
  }
  // A ragged step's tokens per sequence (q_len is their most).
  if (!p.ragged_q_lens.empty()) j["problem"]["ragged_q_lens"] = p.ragged_q_lens;
  return j;
}

namespace {

// An optional list of one integer in [lo, hi] a sequence (`batch` of them) at holder[key]; empty
// when absent.
std::vector<int> per_sequence_ints(const json& holder, const std::string& where, const char* key,
                                   int batch, long long lo, long long hi, const char* what) {
  std::vector<int> out;
  if (!holder.contains(key)) return out;
  const json& list = holder[key];
  if (!list.is_array() || static_cast<int>(list.size()) != batch)
    fail(where, key, fmt::format("expected a list of {} {} (batch)", batch, what));
  for (const json& n : list) {
    if (!n.is_number_integer() || n.get<int64_t>() < lo || n.get<int64_t>() > hi)
      fail(where, key, fmt::format("expected integers in [{}, {}], got {}", lo, hi, n.dump()));
    out.push_back(n.get<int>());
  }
  return out;
}

}  // namespace

ResultRow row_from_json(const json& j, const std::string& w) {
  ResultRow r;
  for (const RowField& f : row_fields()) {
    if (f.set == nullptr) continue;  // derived: written for readers, recomputed here
    const std::string object = f.object;
    const std::string where = object.empty() ? w : w + "." + object;
    const json& holder = object.empty() ? j : field(j, w, object);
    if (f.optional && holder.is_object() && !holder.contains(f.key)) continue;
    const FieldValue v = field_from(f.kind, holder, where, f.key);
    try {
      f.set(r, v);
    } catch (const std::invalid_argument& e) {
      fail(where, f.key, e.what());
    }
  }
  // The shape's sizes within what a problem spec accepts: a report is a file, and select and the
  // time model size lists by them.
  const std::string shape_at = w + ".problem";
  for (const auto& [key, value, most] :
       {std::tuple<const char*, long long, long long>{"batch", r.problem.batch, kMaxProblemCount},
        {"heads", r.problem.heads, kMaxProblemCount},
        {"kv_heads", r.problem.kv_heads, kMaxProblemCount},
        {"depth", r.problem.depth, kMaxProblemCount},
        {"keys", r.problem.keys, kMaxProblemKeys},
        {"q_len", r.problem.q_len, kMaxQueryTokens}}) {
    if (value < 1 || value > most)
      fail(shape_at, key, fmt::format("{} is not in [1, {}]", value, most));
  }
  // The split: its text form, its code, or both agreeing.
  if (!j.contains("split") && !j.contains("partitions")) fail(w, "split", "missing");
  if (j.contains("split") && j.contains("partitions") && j["partitions"].is_number_integer() &&
      j["partitions"].get<long long>() != r.partitions)
    fail(w, "split",
         "'" + split_label(r.partitions) + "' disagrees with partitions " + j["partitions"].dump());
  static const std::string kProblemKey = "problem";  // named: see field()
  const json& problem = field(j, w, kProblemKey);
  // Written before fp8 caches: the cache held q's dtype.
  if (!field(j, w, "traits").contains("kv_dtype")) r.traits.kv_dtype = r.traits.dtype;
  if (!problem.contains("kv_dtype")) r.problem.kv_dtype = r.problem.dtype;
  // Added later, both optional: every length of a ragged batch, every count of ragged tokens.
  const std::string where = w + ".problem";
  r.problem.ragged_lengths = per_sequence_ints(problem, where, "ragged_lengths", r.problem.batch, 1,
                                               kMaxProblemKeys, "lengths");
  r.problem.ragged_q_lens = per_sequence_ints(problem, where, "ragged_q_lens", r.problem.batch, 0,
                                              kMaxQueryTokens, "token counts");
  const std::vector<int>& counts = r.problem.ragged_q_lens;
  const int most =
      counts.empty() ? r.problem.q_len : *std::max_element(counts.begin(), counts.end());
  if (most != r.problem.q_len)
    fail(where, "ragged_q_lens",
         fmt::format("the most tokens, {}, is not q_len {}", most, r.problem.q_len));
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
  // Reports from before the field: measured one way or another, nobody knows which, so compare
  // treats them as measured differently from a report that says (a method mismatch).
  m.reduce_mode = j.contains("reduce_mode") ? get_string(j, w, "reduce_mode") : "unknown";
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
  // Through an iterator, not field(): see there.
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

namespace {

// Writes through `path` in place (a device or a FIFO: /dev/stdout, a pipe to another process).
void write_in_place(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError(path + ": cannot open for writing");
  out << text;
  out.flush();
  if (!out) throw UsageError(path + ": write failed");
}

}  // namespace

void write_text_file_atomic(const std::string& path, const std::string& text) {
  // Only a regular file is replaced (through a temporary and a rename): a link is followed to its
  // target, a device or a FIFO is written in place, a directory refused, so that an --out that
  // names /dev/stdout or a symlink never turns into a regular file.
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (!ec && fs::is_symlink(link)) {
    const fs::path target = fs::weakly_canonical(path, ec);
    if (ec) throw UsageError(path + ": a link whose target cannot be resolved");
    return write_text_file_atomic(target.string(), text);
  }
  if (!ec && fs::exists(link) && !fs::is_regular_file(link)) {
    if (fs::is_directory(link)) throw UsageError(path + ": is a directory, not a file to write");
    return write_in_place(path, text);
  }
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

Report read_report_json(const std::string& path) {
  return report_from_json(read_json_file(path, "the report (missing or unreadable)"), path);
}

}  // namespace mha
