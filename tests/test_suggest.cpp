// Host tests for select --suggest: the candidates read from a report, seeds for tiles the model
// cannot fit, then each problem's unmeasured points by predicted time; and sweep --points' list.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "common/errors.h"
#include "reports/report_json.h"
#include "reports/suggest.h"
#include "sweep/point_list.h"
#include "tests/test_support.h"

namespace mha {
namespace {

ResultRow row(int bn, int batch, int keys, int partitions, double us) {
  ResultRow r;
  r.traits = testing::llama_traits();
  r.traits.bn = bn;
  r.traits.smem_bytes = 30000;
  r.kernel = "decode_bf16_bf16_d128_g4_contig_null_" + tile_id(r.traits);
  r.problem.name = "b" + std::to_string(batch) + "_n" + std::to_string(keys);
  r.problem.batch = batch;
  r.problem.keys = keys;
  r.partitions = partitions;
  r.status = Status::kPassed;
  r.time = timing_stats(us, us, us, 0, 10);
  return r;
}

// A memory-bound step: bn 64 streams faster, splits help the batch-1 problems.
double step_us(int bn, int batch, int keys, int p) {
  const double blocks = std::min(8.0 * batch * p, 264.0);
  return 3.0 + (p > 1 ? 2.0 : 0) + (bn == 64 ? 0.8 : 1.0) * 0.004 * 8 * batch * keys / blocks;
}

Report full_report() {
  Report r;
  r.meta.gpu_name = "NVIDIA H200";
  r.meta.sm_count = 132;
  for (int bn : {32, 64})
    for (int batch : {1, 4, 16})
      for (int keys : {1024, 8192, 65536})
        for (int p : {1, 2, 4, 8, 16, 32})
          r.rows.push_back(row(bn, batch, keys, p, step_us(bn, batch, keys, p)));
  return r;
}

std::vector<CandidatePoint> candidates_of(const Report& r) {
  const std::string path = (testing::temp_dir("test_suggest") / "full.json").string();
  write_report_json(path, r.meta, r.rows);
  return read_candidates(path);
}

TEST(Suggest, WithNothingMeasuredEveryTileGetsSeedsFirst) {
  const std::vector<CandidatePoint> all = candidates_of(full_report());
  ASSERT_EQ(all.size(), full_report().rows.size());
  const auto seeds = suggest_points(all, MeasuredReports{}, TimeModel{}, 2 * kSeedPointsPerTile);
  ASSERT_EQ(seeds.size(), 2u * kSeedPointsPerTile);
  std::map<std::string, int> per_tile;
  std::set<std::string> problems, keys;
  for (const CandidatePoint& c : seeds) {
    ++per_tile[c.tile];
    problems.insert(c.shape.name);
    keys.insert(c.key);
  }
  EXPECT_EQ(keys.size(), seeds.size());
  EXPECT_EQ(per_tile.size(), 2u);
  for (const auto& [tile, n] : per_tile) EXPECT_EQ(n, kSeedPointsPerTile) << tile;
  // The corners of (batch, keys): the smallest and the largest of each are among the seeds.
  EXPECT_TRUE(problems.count("b1_n65536") && problems.count("b16_n1024") &&
              problems.count("b1_n1024") && problems.count("b16_n65536"));
}

TEST(Suggest, ThenEachProblemsBestPredictedUnmeasuredPoint) {
  Report measured_report = full_report();
  Report sample = measured_report;
  sample.rows.clear();
  for (const ResultRow& r : measured_report.rows)  // every tile fitted from splits 1, 4 and 32
    if (r.partitions == 1 || r.partitions == 4 || r.partitions == 32) sample.rows.push_back(r);
  const std::vector<Report> reports{sample};  // MeasuredReports points into its rows
  const MeasuredReports measured = measure_reports(reports, {"sample.json"}, "test");
  const TimeModel model = fit_time_model(model_samples([&] {
                                           Subset s;
                                           for (const auto& [n, q] : measured.problems)
                                             s.push_back(&q);
                                           return s;
                                         }()),
                                         132, 0);
  ASSERT_EQ(model.tiles.size(), 2u);
  const std::vector<CandidatePoint> all = candidates_of(measured_report);
  const auto next = suggest_points(all, measured, model, 9);  // one per problem
  ASSERT_EQ(next.size(), 9u);
  std::set<std::string> problems;
  for (const CandidatePoint& c : next) {
    EXPECT_TRUE(c.partitions != 1 && c.partitions != 4 && c.partitions != 32) << c.key;  // measured
    problems.insert(c.shape.name);
    // Its predicted time is the least of the problem's unmeasured points.
    double best = 1e300;
    for (const CandidatePoint& o : all) {
      if (o.shape.name != c.shape.name || o.partitions == 1 || o.partitions == 4 ||
          o.partitions == 32)
        continue;
      for (const TileModel& t : model.tiles)
        if (t.tile == o.tile) best = std::min(best, model_step_us(t, model, o.shape, o.partitions));
    }
    for (const TileModel& t : model.tiles) {
      if (t.tile == c.tile) {
        EXPECT_DOUBLE_EQ(model_step_us(t, model, c.shape, c.partitions), best) << c.key;
      }
    }
  }
  EXPECT_EQ(problems.size(), 9u);  // round robin: every problem before any gets a second
}

TEST(Suggest, RefusesAFileThatHoldsNoPoints) {
  const auto dir = testing::temp_dir("test_suggest");
  const std::string path = (dir / "neither.json").string();
  std::ofstream(path) << "{\"something\": 1}";
  EXPECT_THROW(read_candidates(path), UsageError);
}

TEST(PointList, ReadsKeysAndRefusesPointsOfAnotherPlan) {
  const auto dir = testing::temp_dir("test_suggest");
  const std::string path = (dir / "points.json").string();
  std::ofstream(path) << R"({"points": [{"key": "k|a|p1"}, {"key": "k|b|p1"}]})";
  const std::set<std::string> keys = read_point_list(path);
  EXPECT_EQ(keys, (std::set<std::string>{"k|a|p1", "k|b|p1"}));
  const std::vector<SweepPoint> plan{{"k|a|p1", 1}, {"k|b|p1", 1}, {"k|c|p1", 1}};
  EXPECT_EQ(restrict_to_points(plan, keys, std::nullopt, path).size(), 2u);
  EXPECT_EQ(restrict_to_points(plan, keys, std::set<std::string>{"k|a|p1"}, path).size(), 1u);
  EXPECT_THROW(restrict_to_points(plan, keys, std::set<std::string>{"k|c|p1"}, path), UsageError);
  EXPECT_THROW(restrict_to_points({{"k|a|p1", 1}}, keys, std::nullopt, path), UsageError);
  std::ofstream(path) << R"({"points": [{"nokey": 1}]})";
  EXPECT_THROW(read_point_list(path), UsageError);
}

}  // namespace
}  // namespace mha
