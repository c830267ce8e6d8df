// Append-only JSON Lines journal of a sweep, with crash detection on resume.
#include "reports/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/errors.h"
#include "reports/report_json.h"

namespace mha {

using nlohmann::json;

ResultRow crashed_row(ResultRow point) {
  point.status = Status::kFailed;
  point.reason = kCrashedReason;
  point.time = TimingStats{};
  return point;
}

namespace {
// The journal's file, opened for append and locked for this process alone: a second sweep given
// the same --out while one runs would interleave its lines with the first's (and share its GPU).
// A new journal is created, or emptied once the lock is held; one to resume must exist. The lock
// goes with the file when it is closed.
std::FILE* open_locked(const std::string& path, bool is_new) {
  // O_APPEND: every line lands at the end, also after a resume cuts the file back.
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | (is_new ? O_CREAT : 0), 0644);
  if (fd < 0)
    throw UsageError(fmt::format("{}: cannot open the journal: {}", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    throw UsageError(
        err == EWOULDBLOCK
            ? fmt::format("{}: another sweep is writing this journal; wait for it to "
                          "end, or give another --out",
                          path)
            : fmt::format("{}: cannot lock the journal: {}", path, std::strerror(err)));
  }
  if (is_new && ::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    throw UsageError(fmt::format("{}: cannot empty the journal: {}", path, std::strerror(err)));
  }
  std::FILE* file = ::fdopen(fd, "ab");
  if (!file) {
    ::close(fd);
    throw UsageError(fmt::format("{}: cannot open the journal: {}", path, std::strerror(errno)));
  }
  return file;
}
}  // namespace

Journal::Journal(Journal&& other) noexcept { *this = std::move(other); }

Journal& Journal::operator=(Journal&& other) noexcept {
  if (this != &other) {
    if (file_) std::fclose(file_);
    path_ = std::move(other.path_);
    file_ = std::exchange(other.file_, nullptr);
    meta_ = std::move(other.meta_);
    rows_ = std::move(other.rows_);
    done_keys_ = std::move(other.done_keys_);
    crashed_keys_ = std::move(other.crashed_keys_);
    retry_keys_ = std::move(other.retry_keys_);
  }
  return *this;
}

Journal::~Journal() {
  if (file_) std::fclose(file_);
}

void Journal::write_line(const json& value) {
  // Invalid UTF-8 (say, in a driver's error text) is replaced rather than losing the line.
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0 ||
      ::fsync(::fileno(file_)) != 0) {
    throw UsageError(
        fmt::format("{}: cannot append to the journal: {}", path_, std::strerror(errno)));
  }
}

void Journal::remember_row(const ResultRow& row) {
  const std::string key = point_key(row);
  if (done_keys_.insert(key).second) {
    rows_.push_back(row);
    return;
  }
  for (ResultRow& r : rows_) {
    if (point_key(r) == key) r = row;
  }
}

Journal Journal::open_new(const std::string& path, const RunMetadata& meta, bool replace_rows) {
  if (!replace_rows) {
    std::ifstream existing(path, std::ios::binary);
    int rows = 0;
    for (std::string line; existing && std::getline(existing, line);)
      rows += line.find("\"event\":\"row\"") != std::string::npos;
    if (rows > 0)
      throw UsageError(fmt::format(
          "{}: holds {} measured row(s) of an earlier sweep; --resume continues it, --force "
          "replaces it, or give another --out",
          path, rows));
  }
  Journal j;
  j.path_ = path;
  j.meta_ = meta;
  j.file_ = open_locked(path, true);
  json first{{"event", "metadata"},
             {"schema_version", kReportSchemaVersion},
             {"metadata", to_json_value(meta)}};
  j.write_line(first);
  return j;
}

Journal Journal::open_resume(const std::string& path) {
  Journal j;
  j.path_ = path;
  j.file_ = open_locked(path, false);  // before it is read: no other sweep may be writing
  const std::string text = read_text_file(path, "the journal to resume (missing or unreadable)");
  // Points in flight: key -> the point recorded with its started event (empty kernel when only
  // the key was given) and how many times it was started since its last row.
  struct OpenPoint {
    ResultRow point;
    int starts = 0;
  };
  std::map<std::string, OpenPoint> open_points;
  size_t pos = 0;
  size_t valid_end = 0;  // byte offset just after the last whole, parsed line
  int line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const bool is_last = nl == std::string::npos || nl + 1 >= text.size();
    const std::string line =
        text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    ++line_no;
    const std::string where = fmt::format("{}: line {}", path, line_no);
    json value;
    bool parsed = nl != std::string::npos;  // a line without its newline was cut short
    if (parsed) {
      try {
        value = json::parse(line);
      } catch (const json::parse_error&) {
        parsed = false;
      }
    }
    if (!parsed) {
      if (is_last && line_no > 1) {
        fmt::print(stderr, "warning: {}: truncated last line ignored ({} bytes)\n", where,
                   line.size());
        break;
      }
      throw UsageError(where + ": not a valid journal line (malformed JSON)");
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      valid_end = nl + 1;
      pos = nl + 1;
      continue;
    }
    if (!value.is_object() || !value.contains("event") || !value["event"].is_string()) {
      throw UsageError(where + ": event: missing");
    }
    const std::string event = value["event"].get<std::string>();
    if (line_no == 1) {
      if (event != "metadata") throw UsageError(where + ": event: the first line must be metadata");
      if (!value.contains("schema_version") || value["schema_version"] != kReportSchemaVersion) {
        throw UsageError(where + ": schema_version: missing or not " +
                         std::to_string(kReportSchemaVersion));
      }
      if (!value.contains("metadata")) throw UsageError(where + ": metadata: missing");
      j.meta_ = metadata_from_json(value["metadata"], where + ": metadata");
    } else if (event == "started") {
      if (!value.contains("key") || !value["key"].is_string()) {
        throw UsageError(where + ": key: missing");
      }
      OpenPoint& open = open_points[value["key"].get<std::string>()];
      if (value.contains("point")) open.point = row_from_json(value["point"], where + ": point");
      ++open.starts;
    } else if (event == "row") {
      if (!value.contains("row")) throw UsageError(where + ": row: missing");
      ResultRow row = row_from_json(value["row"], where + ": row");
      open_points.erase(point_key(row));
      j.remember_row(row);
    } else {
      throw UsageError(where + ": event: unknown event '" + event + "'");
    }
    valid_end = nl + 1;
    pos = nl + 1;
  }
  if (line_no == 0) throw UsageError(path + ": the journal is empty (no metadata line)");

  if (valid_end < text.size() && ::truncate(path.c_str(), static_cast<off_t>(valid_end)) != 0) {
    throw UsageError(
        fmt::format("{}: cannot cut the truncated last line: {}", path, std::strerror(errno)));
  }
  for (const auto& [key, open] : open_points) {
    if (open.starts < 2) {
      j.retry_keys_.insert(key);
      continue;
    }
    j.crashed_keys_.insert(key);
    if (!open.point.kernel.empty()) j.append_row(crashed_row(open.point));
  }
  return j;
}

namespace {
// Wall-clock seconds since the Unix epoch, to the millisecond: the events of workers on several
// GPUs, shards and resumed runs share one clock, so a journal shows when each point ran and how
// fast a partial sweep went (without them, a two-GPU sweep cut short had no times to compare).
double unix_seconds() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()) /
         1000.0;
}
}  // namespace

void Journal::append_started(const ResultRow& point) {
  ResultRow identity;
  identity.kernel = point.kernel;
  identity.traits = point.traits;
  identity.problem = point.problem;
  identity.partitions = point.partitions;
  identity.device = point.device;
  json line{{"event", "started"},
            {"key", point_key(point)},
            {"unix_s", unix_seconds()},
            {"point", to_json_value(identity)}};
  write_line(line);
}

void Journal::append_started(const std::string& key) {
  write_line(json{{"event", "started"}, {"key", key}, {"unix_s", unix_seconds()}});
}

void Journal::append_row(const ResultRow& row) {
  write_line(json{{"event", "row"},
                  {"key", point_key(row)},
                  {"unix_s", unix_seconds()},
                  {"row", to_json_value(row)}});
  remember_row(row);
}

}  // namespace mha
