// Host tests for the time model: the fit recovers a tile's parameters from times the model's own
// formula made, it extrapolates to shapes it did not see, it borrows a fitted family for one never
// measured, a partial last wave costs a full one, the residual correction stays at 1 where nothing
// near was measured, and a prediction nothing near supports pays a margin.
#include <gtest/gtest.h>

#include <cmath>

#include "api/split_plan.h"
#include "reports/time_model.h"
#include "tests/test_support.h"

namespace mha {
namespace {

constexpr int kSmCount = 132;
constexpr double kPeakGbps = 4400;

KernelTraits tile(int bn, int stages, int threads) {
  KernelTraits t = testing::llama_traits();
  t.bn = bn;
  t.stages = stages;
  t.threads = threads;
  t.smem_bytes = 40000;
  return t;
}

ProblemShape shape(int batch, int keys, int heads = 32, int kv_heads = 8) {
  ProblemShape p;
  p.name = "b" + std::to_string(batch) + "_h" + std::to_string(heads) + "_n" + std::to_string(keys);
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.keys = keys;
  return p;
}

// Two made-up tiles with parameters on the fit's grid: a small one with a long fixed cost and a
// slow block, and a wide one that streams faster per block but holds one block per SM.
TileModel truth(const KernelTraits& t, double fixed_us, double tile_us, int blocks_per_sm,
                double fraction) {
  TileModel m;
  m.family = model_family(t);
  m.tile = tile_id(t);
  m.traits = t;
  m.fixed_us = fixed_us;
  m.tile_us = tile_us;
  m.blocks_per_sm = blocks_per_sm;
  m.bandwidth_gbps = kPeakGbps * fraction;
  m.reduce_us = 1.5;
  m.cluster_us = 0.5;
  return m;
}

// The fit's tile-time grid point `step` for a tile of `bn` keys (d128, bf16).
double grid_tile_us(int bn, int step) {
  const double floor_us = bn * 2.0 * 128 * 2 / (2.0 * kPeakGbps * 1e3 / kSmCount);
  return floor_us * std::pow(64.0, step / 55.0);
}

std::vector<TimeSample> samples_of(const std::vector<TileModel>& tiles, const TimeModel& m,
                                   const std::vector<int>& batches,
                                   const std::vector<int>& lengths) {
  std::vector<TimeSample> out;
  for (const TileModel& t : tiles)
    for (int batch : batches)
      for (int keys : lengths)
        for (int p : {1, 2, 4, 8, 16, 32, encode_cluster_split(4)})
          out.push_back({shape(batch, keys), t.traits, "k_" + t.tile, p,
                         predict_step_us(t, m, shape(batch, keys), p)});
  return out;
}

TimeModel frame() {
  TimeModel m;
  m.sm_count = kSmCount;
  m.peak_read_gbps = kPeakGbps;
  return m;
}

TEST(TimeModel, FitRecoversTheParametersThatMadeTheTimes) {
  const std::vector<TileModel> tiles{truth(tile(64, 3, 128), 3.0, grid_tile_us(64, 20), 2, 0.9),
                                     truth(tile(128, 2, 256), 4.0, grid_tile_us(128, 10), 1, 1.0)};
  const TimeModel fitted =
      fit_time_model(samples_of(tiles, frame(), {1, 8}, {512, 8192, 131072}), kSmCount, kPeakGbps);
  ASSERT_EQ(fitted.tiles.size(), 2u);
  for (const TileModel& want : tiles) {
    const TileModel* got = nullptr;
    for (const TileModel& t : fitted.tiles)
      if (t.tile == want.tile) got = &t;
    ASSERT_NE(got, nullptr) << want.tile;
    EXPECT_LT(got->rms_rel_error, 1e-6) << want.tile;
    EXPECT_EQ(got->blocks_per_sm, want.blocks_per_sm) << want.tile;
    EXPECT_NEAR(got->tile_us, want.tile_us, 1e-9) << want.tile;
    EXPECT_NEAR(got->bandwidth_gbps, want.bandwidth_gbps, 1e-6) << want.tile;
    EXPECT_NEAR(got->fixed_us, want.fixed_us, 1e-6) << want.tile;
    EXPECT_NEAR(got->reduce_us, want.reduce_us, 1e-6) << want.tile;
    EXPECT_NEAR(got->cluster_us, want.cluster_us, 1e-6) << want.tile;
    EXPECT_EQ(got->splits.size(), 7u);
  }
}

TEST(TimeModel, ChoosesTheTrueOptimumOnShapesItDidNotSee) {
  const std::vector<TileModel> tiles{truth(tile(64, 3, 128), 3.0, grid_tile_us(64, 20), 2, 0.9),
                                     truth(tile(128, 2, 256), 4.0, grid_tile_us(128, 10), 1, 1.0)};
  const TimeModel truth_model = frame();
  TimeModel fitted = fit_time_model(samples_of(tiles, truth_model, {1, 8}, {512, 8192, 131072}),
                                    kSmCount, kPeakGbps);
  fitted.corrects_residuals = false;
  for (int batch : {2, 3, 24, 100}) {
    for (int keys : {1000, 3000, 20000, 50000}) {
      const ModelChoice c = choose_by_model(fitted, shape(batch, keys));
      ASSERT_NE(c.tile, nullptr);
      EXPECT_TRUE(c.is_own_family);
      double best = 1e30;
      for (const TileModel& t : tiles)
        for (int p : {1, 2, 4, 8, 16, 32, encode_cluster_split(4)})
          best = std::min(best, predict_step_us(t, truth_model, shape(batch, keys), p));
      const TileModel& chosen_truth = c.tile->tile == tiles[0].tile ? tiles[0] : tiles[1];
      EXPECT_NEAR(predict_step_us(chosen_truth, truth_model, shape(batch, keys), c.partitions),
                  best, 1e-6 * best)
          << "batch " << batch << " keys " << keys;
      EXPECT_FALSE(c.runner_up.empty());
    }
  }
}

TEST(TimeModel, APartialLastWaveCostsAFullOne) {
  // Two blocks per SM: 264 slots. Batch 33 fills them (264 blocks of one KV head each); batch 34
  // makes 272, a full wave and a tail of 8 that lasts as long; batch 16 (128 blocks) is one wave
  // of its own blocks, no longer than a full one.
  TileModel t = truth(tile(64, 3, 128), 0.0, grid_tile_us(64, 5), 2, 0.9);
  const TimeModel m = frame();
  const double full = predict_step_us(t, m, shape(33, 8192), 1);
  EXPECT_NEAR(predict_step_us(t, m, shape(34, 8192), 1), 2 * full, 1e-9 * full);
  const double part = predict_step_us(t, m, shape(16, 8192), 1);
  EXPECT_LT(part, full);
  EXPECT_GT(part, 0.25 * full);
}

TEST(TimeModel, AFamilyNeverMeasuredBorrowsTheNearestFittedOne) {
  const std::vector<TileModel> tiles{truth(tile(64, 3, 128), 3.0, grid_tile_us(64, 20), 2, 0.9)};
  const TimeModel fitted =
      fit_time_model(samples_of(tiles, frame(), {1, 8}, {512, 8192}), kSmCount, kPeakGbps);
  const ModelChoice g8 = choose_by_model(fitted, shape(2, 4096, 64, 8));  // group 8: not fitted
  ASSERT_NE(g8.tile, nullptr);
  EXPECT_FALSE(g8.is_own_family);
  ProblemShape d64 = shape(2, 4096);
  d64.depth = 64;  // another depth: nothing to borrow
  EXPECT_EQ(choose_by_model(fitted, d64).tile, nullptr);
}

TEST(TimeModel, ResidualsCorrectNearWhereTheyWereMeasuredOnly) {
  const TileModel t0 = truth(tile(64, 3, 128), 3.0, grid_tile_us(64, 20), 2, 0.9);
  std::vector<TimeSample> samples = samples_of({t0}, frame(), {1, 8}, {512, 8192, 131072});
  // One split measured 20% slower than the formula at batch 8, 8,192 keys.
  for (TimeSample& s : samples)
    if (s.partitions == 4 && s.shape.batch == 8 && s.shape.keys == 8192) s.time_us *= 1.2;
  const TimeModel fitted = fit_time_model(samples, kSmCount, kPeakGbps);
  ASSERT_EQ(fitted.tiles.size(), 1u);
  const TileModel& t = fitted.tiles[0];
  EXPECT_GT(residual_factor(t, shape(8, 8192), 4), 1.05);
  EXPECT_NEAR(residual_factor(t, shape(8, 8192), 64), 1.0, 1e-12);  // never measured
  EXPECT_LT(std::fabs(std::log(residual_factor(t, shape(1, 131072), 4))),
            std::fabs(std::log(residual_factor(t, shape(8, 8192), 4))));
  const nlohmann::json j = time_model_to_json(fitted);
  ASSERT_EQ(j["tiles"].size(), 1u);
  EXPECT_EQ(j["tiles"][0]["residuals"].size(), samples.size());
  EXPECT_EQ(j["tiles"][0]["splits"].size(), 7u);
  EXPECT_TRUE(j["corrects_residuals"].get<bool>());
}

TEST(TimeModel, AnUnsupportedPredictionMustWinByAMargin) {
  TileModel t = truth(tile(64, 3, 128), 3.0, grid_tile_us(64, 20), 2, 0.9);
  t.rms_rel_error = 0.2;
  t.residuals.push_back({4, std::log2(64.0), std::log2(8192.0), 0.0});  // split 4 near
  // Nothing measured near with split 16: half the fit's error; one sample on the spot: less.
  EXPECT_NEAR(risk_factor(t, shape(8, 8192), 16), std::exp(0.5 * 0.2), 1e-12);
  EXPECT_NEAR(risk_factor(t, shape(8, 8192), 4), std::exp(0.5 * 0.2 * std::sqrt(0.5 / 1.5)), 1e-12);
  t.rms_rel_error = 0;  // an exact fit: no margin
  EXPECT_NEAR(risk_factor(t, shape(8, 8192), 16), 1.0, 1e-12);
}

TEST(TimeModel, FewerThanThreeSamplesFitNothing) {
  const TileModel t0 = truth(tile(64, 3, 128), 3.0, grid_tile_us(64, 20), 2, 0.9);
  std::vector<TimeSample> two = samples_of({t0}, frame(), {1}, {512});
  two.resize(2);
  EXPECT_TRUE(fit_time_model(two, kSmCount, kPeakGbps).tiles.empty());
  EXPECT_NE(time_model_summary(TimeModel{}).find("no tile"), std::string::npos);
}

}  // namespace
}  // namespace mha
