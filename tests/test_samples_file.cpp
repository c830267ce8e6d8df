// The samples sidecar (src/reports/samples_file.h): its path beside a report, a round trip, and
// every line it refuses, named by file and line.
#include <gtest/gtest.h>

#include <fstream>

#include "common/errors.h"
#include "reports/samples_file.h"
#include "tests/test_support.h"

namespace mha {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::temp_path("test_samples_file", name);
  std::ofstream(path) << text;
  return path;
}

TEST(SamplesFile, BesideItsReport) {
  EXPECT_EQ(samples_path_for("results/h200_x.json"), "results/h200_x.samples.jsonl");
  EXPECT_EQ(samples_path_for("run"), "run.samples.jsonl");
}

TEST(SamplesFile, RoundTrip) {
  const std::string path = write("ok.samples.jsonl", samples_line("k|p|1", {12.5, 12.25}) + "\n" +
                                                         samples_line("k|p|2", {7.0}));
  const SamplesByPoint s = read_samples_file(path);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.at("k|p|1"), (std::vector<double>{12.5, 12.25}));
  EXPECT_EQ(s.at("k|p|2"), (std::vector<double>{7.0}));
}

TEST(SamplesFile, AnUnfinishedLastLineIsCutBeforeAResumeAppends) {
  const std::string whole = samples_line("k|p|1", {12.5});
  const std::string path = write("cut.samples.jsonl", whole + "{\"point\":\"k|p|2\",\"samp");
  EXPECT_TRUE(cut_partial_last_line(path));
  EXPECT_EQ(read_samples_file(path).size(), 1u);
  EXPECT_FALSE(cut_partial_last_line(path));  // whole lines only: nothing to cut
  EXPECT_FALSE(cut_partial_last_line(path + ".none"));
}

TEST(SamplesFile, RefusesWhatIsNotASampleLine) {
  auto expect_refused = [](const std::string& text, const std::string& says) {
    const std::string path = write("bad.samples.jsonl", text);
    try {
      read_samples_file(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_refused("{not json}\n", "not a JSON object");
  expect_refused("{\"point\": 3, \"samples_us\": [1]}\n", "needs a string \"point\"");
  expect_refused("{\"point\": \"a\", \"samples_us\": [1, -2]}\n", "finite positive");
  expect_refused("{\"point\": \"a\", \"samples_us\": [1, \"x\"]}\n", "finite positive");
  expect_refused(samples_line("a", {1}) + samples_line("a", {2}), "given twice");
  std::vector<double> many(kMaxSamplesPerPoint + 1, 1.0);
  expect_refused(samples_line("a", many), "more than");
  EXPECT_THROW(read_samples_file(testing::temp_path("test_samples_file", "absent.jsonl")),
               UsageError);
}

}  // namespace
}  // namespace mha
