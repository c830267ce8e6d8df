// ResultRow and RunMetadata <-> JSON, and the JSON report file: {schema_version, metadata, rows}.
// Reading is strict: a missing file, malformed JSON, a missing key or a wrong type throws
// UsageError naming the file and the key (e.g. "r.json: rows[3].problem.keys: missing").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/result_row.h"
#include "problems/json_strict.h"  // read_text_file, read_json_file

namespace mha {

constexpr int kReportSchemaVersion = 1;

struct Report {
  RunMetadata meta;
  std::vector<ResultRow> rows;
};

// Non-finite doubles (a NaN error from a broken kernel) are written as the strings "nan", "inf",
// "-inf", since JSON has no such numbers, and read back as such.
nlohmann::json to_json_value(const KernelTraits& traits);
// The tile part of the traits only (bm bn bk wm wn threads stages warp_split_k smem_bytes).
nlohmann::json tile_to_json(const KernelTraits& traits);
nlohmann::json to_json_value(const ResultRow& row);
nlohmann::json to_json_value(const RunMetadata& meta);
// `where` names the value in messages: "<file>: rows[3]".
ResultRow row_from_json(const nlohmann::json& j, const std::string& where);
RunMetadata metadata_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json report_to_json(const RunMetadata& meta, const std::vector<ResultRow>& rows);
Report report_from_json(const nlohmann::json& j, const std::string& file);

// Written to a temporary file next to `path` and renamed, so a reader never sees half a report.
// Throws UsageError when the file cannot be written.
void write_report_json(const std::string& path, const RunMetadata& meta,
                       const std::vector<ResultRow>& rows);
// Throws UsageError on a missing file, malformed JSON, a different schema version, a missing key.
Report read_report_json(const std::string& path);

// Writes `text` to `path` through a temporary file and a rename; throws UsageError on failure.
void write_text_file_atomic(const std::string& path, const std::string& text);

}  // namespace mha
