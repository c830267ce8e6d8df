// The sweep's default report prefix and the journal a bare --resume continues.
#include "sweep/report_prefix.h"

#include <cctype>
#include <filesystem>
#include <system_error>

namespace mha {

namespace {

constexpr const char* kJournalSuffix = ".journal.jsonl";

// "YYYY-MM-DD": the only dates the default prefix writes.
bool is_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace

std::string dated_report_prefix(const std::string& dir, const std::string& gpu_slug,
                                const std::string& date) {
  return dir + "/" + gpu_slug + "_" + date;
}

std::string newest_journal_prefix(const std::string& dir, const std::string& gpu_slug,
                                  const std::string& today) {
  std::string newest;
  std::error_code ec;
  const std::string head = gpu_slug + "_", tail = kJournalSuffix;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != head.size() + 10 + tail.size() || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string date = name.substr(head.size(), 10);
    if (is_date(date) && entry.is_regular_file(ec) && date > newest) newest = date;
  }
  return dated_report_prefix(dir, gpu_slug, newest.empty() ? today : newest);
}

}  // namespace mha
