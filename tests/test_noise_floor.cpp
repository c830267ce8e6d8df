// Host tests for the cross-machine noise floor (`mha-tune noise`, `compare --noise`): synthetic
// machines of one model with a few percent of spread, a shifted third machine that the plain
// 3% gate fails and the floor passes, and a 10% slowdown that still fails with the floor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>

#include "common/errors.h"
#include "reports/compare.h"
#include "reports/noise_floor.h"
#include "tests/test_support.h"

namespace mha {
namespace {

// Portable uniform numbers in [-1, 1) (std distributions differ between standard libraries).
struct Uniform {
  uint64_t state;
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
};

constexpr int kPoints = 600;

// The true time of point i: 4 us to ~500 us, log-spaced (seven octaves).
double true_us(int i) { return 4.0 * std::pow(2.0, 7.0 * i / kPoints); }

// One machine's report: every point's true time x factor x (1 + spread * u), u uniform in
// [-1, 1). Many samples with a small stdev: the per-run noise term of compare stays negligible,
// so what is tested is the cross-machine spread alone.
Report machine(uint64_t seed, double spread, double factor = 1.0,
               const std::string& gpu = "NVIDIA H200") {
  Uniform u{seed};
  Report r;
  r.meta.gpu_name = gpu;
  r.meta.git_commit = "abc1234";
  for (int i = 0; i < kPoints; ++i) {
    ResultRow row;
    row.kernel = "decode_k" + std::to_string(i % 6);
    row.problem.name = "problem_" + std::to_string(i / 6);
    row.partitions = 1;
    row.status = Status::kPassed;
    const double us = true_us(i) * factor * (1.0 + spread * u.next());
    row.time = timing_stats(us, us * 0.99, us, us * 0.002, 200);
    r.rows.push_back(row);
  }
  return r;
}

TEST(NoiseFloor, ShiftedMachineFailsThePlainGateAndPassesWithTheFloor) {
  const Report a = machine(1, 0.02), b = machine(2, 0.02);
  const NoiseFloor floor = derive_noise_floor(a, b, {});
  EXPECT_EQ(floor.pairs, kPoints);
  ASSERT_GE(floor.buckets.size(), 2u);  // time ranges, not one number

  // A third machine, 0.5% slower on the whole and as noisy: the same code.
  const Report c = machine(3, 0.02, 1.005);
  const CompareResult plain = compare_reports(a, c, {});
  EXPECT_GT(plain.count(Verdict::kSlower), 10) << "the 3% gate alone must fail this machine";
  EXPECT_EQ(plain.exit_code(), 1);

  CompareOptions with_floor;
  with_floor.noise_floor = std::make_shared<NoiseFloor>(floor);
  const CompareResult gated = compare_reports(a, c, with_floor);
  EXPECT_EQ(gated.regressions(), 0);
  EXPECT_EQ(gated.exit_code(), 0);
  EXPECT_NE(compare_markdown(gated).find("Cross-machine noise floor"), std::string::npos);
}

TEST(NoiseFloor, UniformTenPercentSlowdownStillFails) {
  const Report a = machine(1, 0.02), b = machine(2, 0.02);
  CompareOptions with_floor;
  with_floor.noise_floor = std::make_shared<NoiseFloor>(derive_noise_floor(a, b, {}));
  const CompareResult r = compare_reports(a, machine(4, 0.02, 1.10), with_floor);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_GT(r.count(Verdict::kSlower), kPoints * 9 / 10);
}

// The floor's own two reports compare clean in both directions: the floor is the same whichever
// machine is A, and a pair is looked up by the same time whichever report is the baseline. (Found
// on real H200 reports: bucketed by A's time, B -> A failed a row near an octave boundary.)
TEST(NoiseFloor, SymmetricInItsTwoReports) {
  const Report a = machine(1, 0.04), b = machine(2, 0.04);
  const NoiseFloor ab = derive_noise_floor(a, b, {}), ba = derive_noise_floor(b, a, {});
  ASSERT_EQ(ab.buckets.size(), ba.buckets.size());
  for (size_t i = 0; i < ab.buckets.size(); ++i) {
    EXPECT_EQ(ab.buckets[i].pairs, ba.buckets[i].pairs);
    EXPECT_NEAR(ab.buckets[i].tolerance, ba.buckets[i].tolerance, 1e-12);  // |ln(b/a)| rounding
  }
  CompareOptions with_floor;
  with_floor.noise_floor = std::make_shared<NoiseFloor>(ab);
  EXPECT_EQ(compare_reports(a, b, with_floor).regressions(), 0);
  EXPECT_EQ(compare_reports(b, a, with_floor).regressions(), 0);
}

TEST(NoiseFloor, ToleranceIsTheQuantileWidenedByTheMargin) {
  // Two machines differing by exactly 4% on every point: every quantile is 4%.
  const Report a = machine(1, 0.0), b = machine(1, 0.0, 1.04);
  NoiseOptions o;
  o.margin = 1.5;
  const NoiseFloor f = derive_noise_floor(a, b, o);
  for (const NoiseBucket& bucket : f.buckets) {
    EXPECT_NEAR(bucket.quantile_change, 0.04, 1e-9);
    EXPECT_NEAR(bucket.tolerance, std::pow(1.04, 1.5) - 1, 1e-9);
    EXPECT_GE(bucket.pairs, o.min_bucket_pairs);
  }
  // Lookup by the baseline time: shorter than the first range uses the first, longer the last.
  EXPECT_DOUBLE_EQ(f.tolerance_for(0.5), f.buckets.front().tolerance);
  EXPECT_DOUBLE_EQ(f.tolerance_for(1e6), f.buckets.back().tolerance);
}

TEST(NoiseFloor, RangesFollowTheTimesAndMergeShortOnes) {
  // Noisy short kernels, quiet long ones: the floor is wider where the times are short.
  Report a = machine(1, 0.0), b = machine(1, 0.0);
  for (size_t i = 0; i < b.rows.size(); ++i)
    if (a.rows[i].time.median_us < 16) b.rows[i].time.median_us *= (i % 2 ? 1.05 : 0.95);
  NoiseOptions o;
  o.min_bucket_pairs = 50;
  const NoiseFloor f = derive_noise_floor(a, b, o);
  EXPECT_GT(f.tolerance_for(5), 0.05);
  EXPECT_DOUBLE_EQ(f.tolerance_for(400), 0);
  for (const NoiseBucket& bucket : f.buckets) EXPECT_GE(bucket.pairs, 50);
}

TEST(NoiseFloor, JsonRoundTripAndStrictReading) {
  const NoiseFloor f = derive_noise_floor(machine(1, 0.02), machine(2, 0.02), {});
  const std::string path = testing::temp_path("test_noise_floor", "floor.json");
  std::ofstream(path) << noise_floor_to_json(f).dump(2);
  const NoiseFloor back = read_noise_floor(path);
  EXPECT_EQ(back.file, path);
  ASSERT_EQ(back.buckets.size(), f.buckets.size());
  for (size_t i = 0; i < f.buckets.size(); ++i)
    EXPECT_DOUBLE_EQ(back.buckets[i].tolerance, f.buckets[i].tolerance);

  // A report given where a noise floor belongs: the message names the file and the key.
  nlohmann::json not_floor = {{"schema_version", 1}, {"rows", nlohmann::json::array()}};
  try {
    noise_floor_from_json(not_floor, "r.json");
    FAIL() << "a report is not a noise floor";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: format"), std::string::npos) << e.what();
  }
  nlohmann::json bad = noise_floor_to_json(f);
  bad["buckets"][0]["tolerance"] = -1;
  EXPECT_THROW(noise_floor_from_json(bad, "n.json"), UsageError);
}

TEST(NoiseFloor, RefusesWhatItCannotMeasure) {
  EXPECT_THROW(derive_noise_floor(machine(1, 0.02), machine(2, 0.02, 1.0, "NVIDIA H100"), {}),
               UsageError);
  Report few = machine(1, 0.02);
  few.rows.resize(10);
  EXPECT_THROW(derive_noise_floor(few, few, {}), UsageError);
  NoiseOptions bad;
  bad.quantile = 1.5;
  EXPECT_THROW(derive_noise_floor(machine(1, 0.02), machine(2, 0.02), bad), UsageError);
  // A floor measured on one model does not apply to a baseline from another.
  CompareOptions o;
  o.noise_floor =
      std::make_shared<NoiseFloor>(derive_noise_floor(machine(1, 0.02), machine(2, 0.02), {}));
  const Report h100 = machine(1, 0.02, 1.0, "NVIDIA H100");
  EXPECT_THROW(compare_reports(h100, h100, o), UsageError);
  // Different commits are allowed but recorded: the floor then holds code changes too.
  Report other = machine(2, 0.02);
  other.meta.git_commit = "def5678";
  EXPECT_EQ(derive_noise_floor(machine(1, 0.02), other, {}).warnings.size(), 1u);
  // Two runs on one GPU measure run-to-run noise only: said so.
  Report same_a = machine(1, 0.02), same_b = machine(2, 0.02);
  same_a.meta.gpu_uuids = same_b.meta.gpu_uuids = "GPU-8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7";
  const NoiseFloor same = derive_noise_floor(same_a, same_b, {});
  ASSERT_EQ(same.warnings.size(), 1u);
  EXPECT_NE(same.warnings[0].find("same GPU"), std::string::npos);
}

TEST(NoiseFloor, WorksOnTheCommittedH200Baseline) {
  const Report base = read_report_json(std::string(MHA_SOURCE_DIR) + "/results/h200_default.json");
  Report other = base;
  Uniform u{7};
  int timed = 0;
  for (ResultRow& r : other.rows) {
    r.time.median_us *= 1.0 + 0.02 * u.next();
    timed += r.status == Status::kPassed && r.time.median_us > 0;
  }
  const NoiseFloor f = derive_noise_floor(base, other, {}, "base.json", "other.json");
  EXPECT_EQ(f.pairs, timed);
  EXPECT_GT(timed, 1000);
  for (const NoiseBucket& bucket : f.buckets) EXPECT_LE(bucket.tolerance, 0.04);
  CompareOptions o;
  o.noise_floor = std::make_shared<NoiseFloor>(f);
  EXPECT_EQ(compare_reports(base, other, o).exit_code(), 0);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(NoiseFloor, RecordsReportsByNamesThatTravel) {
  // A floor made from a temporary file once carried '/tmp/c4/r/...' into the repository, and
  // compare printed it: a path outside the working directory is recorded by its name alone.
  const Report a = machine(1, 0.02), b = machine(2, 0.02);
  const std::string inside = "results/x_default.json";
  const NoiseFloor f = derive_noise_floor(a, b, {}, inside, "/tmp/c4/r/default_second_h200.json");
  EXPECT_EQ(f.report_a, inside);
  EXPECT_EQ(f.report_b, "default_second_h200.json");
  EXPECT_EQ(derive_noise_floor(a, b, {}, "", "").report_a, "");
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(NoiseFloor, NoFloorWideEnoughToPassAFiveTimesSlowerReport) {
  // A floor of 1000% tolerances was accepted and passed a report 5x slower; --margin inf wrote
  // null.
  const Report a = machine(1, 0.02), b = machine(2, 0.02);
  NoiseOptions o;
  o.margin = INFINITY;
  EXPECT_THROW(derive_noise_floor(a, b, o), UsageError);
  EXPECT_THROW(derive_noise_floor(a, machine(3, 0.02, 5.0), {}, "a.json", "b.json"), UsageError);
  nlohmann::json j = noise_floor_to_json(derive_noise_floor(a, b, {}));
  j["buckets"][0]["tolerance"] = 10.0;
  try {
    noise_floor_from_json(j, "wide.json");
    ADD_FAILURE() << "a 1000% floor was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("tolerance: 10 is not a fraction in [0, 0.25]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mha
