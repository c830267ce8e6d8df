// Where a sweep writes when no --out is given: results/<gpu slug>_<UTC date>. A --resume without
// --out continues the newest such journal of this GPU, not only today's: a sweep that stopped
// before midnight is resumed after it.
#pragma once

#include <string>

namespace mha {

// "<dir>/<gpu_slug>_<date>", date as YYYY-MM-DD.
std::string dated_report_prefix(const std::string& dir, const std::string& gpu_slug,
                                const std::string& date);

// The prefix of the newest "<dir>/<gpu_slug>_YYYY-MM-DD.journal.jsonl" (dates compare as text),
// or today's prefix when there is none (the resume then names the missing file).
std::string newest_journal_prefix(const std::string& dir, const std::string& gpu_slug,
                                  const std::string& today);

}  // namespace mha
