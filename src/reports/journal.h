// The crash-proof store of a sweep: an append-only JSON Lines file, each line flushed and fsynced
// as written. Line 1 is the metadata; then "started" events (before a point is launched) and
// rows. On resume, a point started once but never finished is retried (a preempted job, kill -9,
// is not the point's fault); one started twice without a row (it died again) becomes a failed
// row, so the sweep skips it instead of dying on it a third time.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/result_row.h"

namespace mha {

constexpr const char* kCrashedReason =
    "process ended twice while running this point (retried once on resume)";

// `point` (kernel, traits, problem, partitions filled) as a failed row with kCrashedReason.
ResultRow crashed_row(ResultRow point);

// Lines, one JSON object each:
//   {"event":"metadata","schema_version":1,"metadata":{...}}
//   {"event":"started","key":"...","unix_s":T[,"point":{row with identity fields}]}
//   {"event":"row","key":"...","unix_s":T,"row":{...}}
// T: wall-clock seconds since the Unix epoch when the line was written (ms resolution; journals
// written before it have none, and reading does not need it).
class Journal {
 public:
  // Creates `path` and writes the metadata line. A file there that holds rows (an earlier sweep's
  // measurements) is replaced only with `replace_rows` (sweep --force); else UsageError names it
  // and the ways on (--resume, --force, another --out). Throws UsageError if it cannot create it.
  static Journal open_new(const std::string& path, const RunMetadata& meta,
                          bool replace_rows = false);
  // Reads `path`, drops a truncated last line (warning on stderr; the file is cut back to the
  // last whole line so appends start clean), and reopens for append. A point started without a
  // row after its last start is in flight: started once, it is left to run again (retry_keys());
  // started twice or more, it crashed twice and, when started with its ResultRow, becomes a
  // failed row (appended to the file).
  // Throws UsageError on a missing file, a bad metadata line or a malformed line before the last.
  static Journal open_resume(const std::string& path);

  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // Before launching a point. The row overload records the point itself, so that a resume can
  // write its failed row without the sweep's help; the key overload records the key only, and a
  // resume then lists it in crashed_keys() for the sweep to append crashed_row(point).
  void append_started(const ResultRow& point);
  void append_started(const std::string& key);
  // After measuring a point (any status). A later row for the same key replaces the earlier one.
  void append_row(const ResultRow& row);

  const RunMetadata& meta() const { return meta_; }
  // One row per key, in the order keys were first finished.
  const std::vector<ResultRow>& rows() const { return rows_; }
  const std::set<std::string>& done_keys() const { return done_keys_; }
  // Keys found started twice (or more) and unfinished when resuming (whether or not a failed row
  // was written for them). A sweep skips a point if its key is in done_keys(), and for a crashed
  // key not in done_keys() appends crashed_row(point) and skips it.
  const std::set<std::string>& crashed_keys() const { return crashed_keys_; }
  // Keys found started once and unfinished when resuming: the sweep runs them again, recording a
  // second start first, so that dying on them again makes them crashed on the next resume.
  const std::set<std::string>& retry_keys() const { return retry_keys_; }
  const std::string& path() const { return path_; }

 private:
  Journal() = default;
  void write_line(const nlohmann::json& value);
  void remember_row(const ResultRow& row);

  std::string path_;
  std::FILE* file_ = nullptr;
  RunMetadata meta_;
  std::vector<ResultRow> rows_;
  std::set<std::string> done_keys_;
  std::set<std::string> crashed_keys_;
  std::set<std::string> retry_keys_;
};

}  // namespace mha
