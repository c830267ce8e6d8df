// Host tests for the sweep journal: rows survive as written, a truncated last line is dropped,
// a point in flight when the process died is retried once on resume, and one that dies twice
// is recorded as failed; a second sweep cannot write a journal another is writing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.h"
#include "reports/journal.h"
#include "tests/test_support.h"

namespace mha {
namespace {

std::string temp_path(const std::string& name) {  // a fresh file: journals append
  const std::string path = testing::temp_path("test_journal", name);
  std::filesystem::remove(path);
  return path;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ResultRow point(const std::string& kernel, const std::string& problem, int partitions) {
  ResultRow r;
  r.kernel = kernel;
  r.traits.dtype = "bf16";
  r.traits.bm = 16;
  r.problem.name = problem;
  r.problem.keys = 4096;
  r.partitions = partitions;
  return r;
}

ResultRow measured(ResultRow r, double us) {
  r.status = Status::kPassed;
  r.time = timing_stats(us, us * 0.9, us, us * 0.01, 20);
  return r;
}

RunMetadata meta() {
  RunMetadata m;
  m.gpu_name = "NVIDIA H200";
  m.sm_count = 132;
  m.config_hash = "0123456789abcdef";
  return m;
}

TEST(Journal, PointKeyNamesAllThreeParts) {
  EXPECT_EQ(point_key("k", "p", 4), "k|p|p4");
  EXPECT_NE(point_key("k", "p", 4), point_key("k", "p", 8));
  EXPECT_EQ(point_key(point("k", "p", 2)), "k|p|p2");
}

TEST(Journal, RowsAreOnDiskAsSoonAsAppended) {
  const std::string path = temp_path("live.jsonl");
  Journal j = Journal::open_new(path, meta());
  j.append_started(point("k1", "p1", 1));
  j.append_row(measured(point("k1", "p1", 1), 10));
  // Without closing: the file must already hold the metadata, the start and the row.
  const std::string text = read_all(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_NE(text.find("\"event\":\"row\""), std::string::npos);
  EXPECT_EQ(j.rows().size(), 1u);
}

TEST(Journal, EveryEventCarriesItsWallClockTime) {
  const std::string path = temp_path("times.jsonl");
  const double before =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  {
    Journal j = Journal::open_new(path, meta());
    j.append_started(point("k1", "p1", 1));
    j.append_started("k2|p1|p1");
    j.append_row(measured(point("k1", "p1", 1), 10));
  }
  const double after =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::istringstream lines(read_all(path));
  std::string line;
  std::getline(lines, line);  // the metadata
  int events = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json event = nlohmann::json::parse(line);
    ASSERT_TRUE(event.contains("unix_s")) << line;
    EXPECT_GE(event["unix_s"].get<double>(), before - 0.001) << line;  // written at ms resolution
    EXPECT_LE(event["unix_s"].get<double>(), after) << line;
    ++events;
  }
  EXPECT_EQ(events, 3);
  EXPECT_EQ(Journal::open_resume(path).rows().size(), 1u);  // the times do not disturb a resume
}

TEST(Journal, ASecondSweepOnTheSameJournalIsRefusedWhileTheFirstWrites) {
  const std::string path = temp_path("locked.jsonl");
  Journal first = Journal::open_new(path, meta());
  first.append_started(point("k1", "p1", 1));
  first.append_row(measured(point("k1", "p1", 1), 10.0));
  for (const bool resume : {true, false}) {
    try {
      if (resume)
        Journal::open_resume(path);
      else
        Journal::open_new(path, meta(), true);
      ADD_FAILURE() << "a second writer was let in (resume " << resume << ")";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("another sweep is writing"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(Journal::open_resume(path + ".missing"), UsageError);  // nothing to resume
}

TEST(Journal, ResumeRestoresRowsAndMetadata) {
  const std::string path = temp_path("resume.jsonl");
  {
    Journal j = Journal::open_new(path, meta());
    for (int p : {1, 2, 4}) {
      j.append_started(point("k1", "p1", p));
      j.append_row(measured(point("k1", "p1", p), 10.0 / p));
    }
  }
  Journal j = Journal::open_resume(path);
  EXPECT_EQ(j.meta().gpu_name, "NVIDIA H200");
  EXPECT_EQ(j.meta().config_hash, "0123456789abcdef");
  ASSERT_EQ(j.rows().size(), 3u);
  EXPECT_DOUBLE_EQ(j.rows()[2].time.median_us, 2.5);
  EXPECT_TRUE(j.done_keys().count(point_key("k1", "p1", 4)));
  EXPECT_TRUE(j.crashed_keys().empty());
}

TEST(Journal, PointInFlightIsRetriedOnceOnResume) {
  // A preempted job (kill -9) is not the point's fault: the resumed sweep runs it again, so the
  // resumed report matches an uninterrupted one.
  const std::string path = temp_path("preempted.jsonl");
  {
    Journal j = Journal::open_new(path, meta());
    j.append_started(point("k1", "p1", 1));
    j.append_row(measured(point("k1", "p1", 1), 10));
    j.append_started(point("k2", "p1", 1));  // killed here
  }
  const std::string key = point_key("k2", "p1", 1);
  {
    Journal j = Journal::open_resume(path);
    EXPECT_TRUE(j.retry_keys().count(key));
    EXPECT_FALSE(j.crashed_keys().count(key));
    EXPECT_FALSE(j.done_keys().count(key));  // the sweep runs it again
    ASSERT_EQ(j.rows().size(), 1u);
    j.append_started(point("k2", "p1", 1));
    j.append_row(measured(point("k2", "p1", 1), 11));
  }
  Journal j = Journal::open_resume(path);
  EXPECT_TRUE(j.retry_keys().empty());
  EXPECT_TRUE(j.crashed_keys().empty());
  ASSERT_EQ(j.rows().size(), 2u);
  EXPECT_EQ(j.rows()[1].status, Status::kPassed);
  EXPECT_DOUBLE_EQ(j.rows()[1].time.median_us, 11);
}

TEST(Journal, PointThatDiesTwiceBecomesFailedOnResume) {
  const std::string path = temp_path("crash.jsonl");
  const std::string key = point_key("k2", "p1", 1);
  {
    Journal j = Journal::open_new(path, meta());
    j.append_started(point("k1", "p1", 1));
    j.append_row(measured(point("k1", "p1", 1), 10));
    j.append_started(point("k2", "p1", 1));  // the process dies here (sticky CUDA error)
  }
  {
    Journal j = Journal::open_resume(path);
    ASSERT_TRUE(j.retry_keys().count(key));
    j.append_started(point("k2", "p1", 1));  // the retry dies too
  }
  {
    Journal j = Journal::open_resume(path);
    EXPECT_TRUE(j.crashed_keys().count(key));
    EXPECT_FALSE(j.retry_keys().count(key));
    EXPECT_TRUE(j.done_keys().count(key));  // the sweep skips it
    ASSERT_EQ(j.rows().size(), 2u);
    const ResultRow& failed = j.rows()[1];
    EXPECT_EQ(failed.kernel, "k2");
    EXPECT_EQ(failed.status, Status::kFailed);
    EXPECT_EQ(failed.reason, kCrashedReason);
    EXPECT_NE(failed.reason.find("twice"), std::string::npos);
    EXPECT_EQ(failed.problem.keys, 4096);
    j.append_started(point("k3", "p1", 1));
    j.append_row(measured(point("k3", "p1", 1), 12));
  }
  // The failed row was written: a third resume sees it as done, not as a new crash.
  Journal j = Journal::open_resume(path);
  EXPECT_TRUE(j.crashed_keys().empty());
  EXPECT_TRUE(j.retry_keys().empty());
  EXPECT_EQ(j.rows().size(), 3u);
  EXPECT_EQ(j.rows()[1].status, Status::kFailed);
}

TEST(Journal, CrashesOnDifferentPointsEachGetTheirRetry) {
  // Two preemptions, each on another point: neither point died twice.
  const std::string path = temp_path("two_preemptions.jsonl");
  {
    Journal j = Journal::open_new(path, meta());
    j.append_started(point("k1", "p1", 1));
  }
  {
    Journal j = Journal::open_resume(path);
    j.append_started(point("k1", "p1", 1));
    j.append_row(measured(point("k1", "p1", 1), 10));
    j.append_started(point("k2", "p1", 1));
  }
  Journal j = Journal::open_resume(path);
  EXPECT_TRUE(j.crashed_keys().empty());
  EXPECT_TRUE(j.retry_keys().count(point_key("k2", "p1", 1)));
  ASSERT_EQ(j.rows().size(), 1u);
  EXPECT_EQ(j.rows()[0].status, Status::kPassed);
}

TEST(Journal, KeyOnlyStartIsListedForTheSweepToRecord) {
  const std::string path = temp_path("key_only.jsonl");
  {
    Journal j = Journal::open_new(path, meta());
    j.append_started(point_key("k9", "p1", 2));
    j.append_started(point_key("k9", "p1", 2));  // started twice: it died on its retry too
  }
  Journal j = Journal::open_resume(path);
  const std::string key = point_key("k9", "p1", 2);
  EXPECT_TRUE(j.crashed_keys().count(key));
  EXPECT_FALSE(j.done_keys().count(key));
  j.append_row(crashed_row(point("k9", "p1", 2)));
  EXPECT_TRUE(j.done_keys().count(key));
  EXPECT_EQ(j.rows().back().status, Status::kFailed);
}

TEST(Journal, TruncatedLastLineIsDroppedAndAppendsStayClean) {
  const std::string path = temp_path("truncated.jsonl");
  {
    Journal j = Journal::open_new(path, meta());
    j.append_started(point("k1", "p1", 1));
    j.append_row(measured(point("k1", "p1", 1), 10));
    j.append_started(point("k2", "p1", 1));
    j.append_row(measured(point("k2", "p1", 1), 11));
  }
  // Cut the last row in half, as a crash in the middle of a write would.
  std::string text = read_all(path);
  text.resize(text.size() - 40);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  {
    Journal j = Journal::open_resume(path);
    ASSERT_EQ(j.rows().size(), 1u);  // k1 measured; k2 (its row lost) is in flight: retried
    EXPECT_TRUE(j.retry_keys().count(point_key("k2", "p1", 1)));
    j.append_row(measured(point("k3", "p1", 1), 12));
  }
  Journal j = Journal::open_resume(path);  // every line whole again
  EXPECT_EQ(j.rows().size(), 2u);
}

TEST(Journal, MalformedInputThrowsUsageError) {
  EXPECT_THROW(Journal::open_resume(temp_path("missing.jsonl")), UsageError);
  const std::string path = temp_path("corrupt.jsonl");
  {
    Journal j = Journal::open_new(path, meta());
    j.append_row(measured(point("k1", "p1", 1), 10));
  }
  std::string text = read_all(path);
  text.insert(text.find('\n') + 1, "{not json\n");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  try {
    Journal::open_resume(path);
    FAIL() << "a malformed line before the last must not be skipped";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt.jsonl: line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(Journal, ANewSweepRefusesToReplaceAnEarlierSweepsRows) {
  // A second sweep with the same (default, dated) --out truncated the first one's journal.
  const std::string path = temp_path("replace.jsonl");
  std::remove(path.c_str());
  { Journal::open_new(path, meta()); }  // metadata only: nothing measured, nothing to lose
  {
    Journal j = Journal::open_new(path, meta());
    j.append_row(measured(point("k1", "p1", 1), 10));
  }
  try {
    Journal::open_new(path, meta());
    ADD_FAILURE() << "replaced a journal holding a row";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": holds 1 measured row(s)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Journal::open_resume(path).rows().size(), 1u);  // still there
  { Journal::open_new(path, meta(), true); }                // --force
  EXPECT_TRUE(Journal::open_resume(path).rows().empty());
}

}  // namespace
}  // namespace mha
