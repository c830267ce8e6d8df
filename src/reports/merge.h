// Joining the reports of a sharded sweep (`mha-tune merge`): they must come from the same sweep
// and GPU model; duplicate rows are dropped with a warning and missing shards are named.
#pragma once

#include <string>
#include <vector>

#include "reports/report_json.h"

namespace mha {

// What makes two reports shards of one sweep: the command line without the program path and
// the options that differ between shards without changing what is measured (--shard, --out,
// --device, --resume, --quiet; either "--opt value" or "--opt=value").
std::string sweep_identity(const RunMetadata& meta);

struct MergeInput {
  std::string file;  // for messages
  Report report;
};

struct MergeResult {
  RunMetadata meta;                     // the lowest shard's, shard fields reset, devices joined
  std::vector<ResultRow> rows;          // by shard index, then as in each report
  std::vector<std::string> duplicates;  // "<key> (in a.json and b.json)": the first was kept
  int shard_count = 0;                  // 0: the reports carry no shard metadata
  std::vector<int> missing_shards;      // of 0..shard_count-1
  std::vector<std::string> warnings;    // e.g. shards built from different commits
  bool complete() const { return missing_shards.empty(); }
};

// Throws UsageError (naming both files) for no input, different config_hash, sweep_identity or
// gpu_name (unless allow_different_gpu), or shard metadata that disagrees between reports.
MergeResult merge_reports(const std::vector<MergeInput>& inputs, bool allow_different_gpu);

// `mha-tune merge`: reads `files`, writes <out_prefix>.json and .csv (also when shards are
// missing, so nothing measured is lost), prints duplicates and missing shards.
// Returns kExitOk when every shard is present, kExitFailure when some are missing.
int run_merge(const std::vector<std::string>& files, const std::string& out_prefix,
              bool allow_different_gpu);

}  // namespace mha
