// The sweep's default prefix and the journal a bare --resume continues (src/sweep/report_prefix.h):
// the newest of this GPU's dated journals, so a sweep stopped before midnight resumes after it;
// other GPUs' journals, other names and folders that look like journals are not taken.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sweep/report_prefix.h"
#include "tests/test_support.h"

namespace mha {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p) { std::ofstream(p) << "{}\n"; }

TEST(ReportPrefix, DatedPrefix) {
  EXPECT_EQ(dated_report_prefix("results", "nvidia-h200", "2026-12-02"),
            "results/nvidia-h200_2026-12-02");
}

TEST(ReportPrefix, ResumeTakesTheNewestJournalOfThisGpu) {
  const fs::path dir = testing::temp_dir("report_prefix_");
  // Nothing yet: today's prefix (the resume then names the missing journal).
  EXPECT_EQ(newest_journal_prefix(dir.string(), "nvidia-h200", "2026-12-02"),
            (dir / "nvidia-h200_2026-12-02").string());
  touch(dir / "nvidia-h200_2026-11-30.journal.jsonl");
  touch(dir / "nvidia-h200_2026-12-01.journal.jsonl");                 // stopped before midnight
  touch(dir / "nvidia-h100_2026-12-05.journal.jsonl");                 // another GPU
  touch(dir / "nvidia-h200_2026-12-09.json");                          // a report, not a journal
  touch(dir / "nvidia-h200_latest.journal.jsonl");                     // not a date
  fs::create_directory(dir / "nvidia-h200_2026-12-07.journal.jsonl");  // a folder
  EXPECT_EQ(newest_journal_prefix(dir.string(), "nvidia-h200", "2026-12-02"),
            (dir / "nvidia-h200_2026-12-01").string());
  touch(dir / "nvidia-h200_2026-12-02.journal.jsonl");
  EXPECT_EQ(newest_journal_prefix(dir.string(), "nvidia-h200", "2026-12-02"),
            (dir / "nvidia-h200_2026-12-02").string());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mha
