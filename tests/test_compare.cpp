// Host tests for `mha-tune compare`: pairing, noise-aware classification, status regressions,
// the GPU check, exit codes and the markdown / CSV outputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "defaults/defaults_table.h"
#include "reports/compare.h"
#include "reports/journal.h"
#include "reports/report_json.h"
#include "tests/test_support.h"

namespace mha {
namespace {

std::string temp_path(const std::string& name) { return testing::temp_path("test_compare", name); }

ResultRow row(const std::string& kernel, const std::string& problem, int partitions, double us,
              double rel_stdev = 0.01, int samples = 50) {
  ResultRow r;
  r.kernel = kernel;
  r.problem.name = problem;
  r.problem.keys = 1024;  // a report's rows carry a shape a problem spec accepts
  r.partitions = partitions;
  r.status = Status::kPassed;
  r.time = timing_stats(us, us * 0.98, us, us * rel_stdev, samples);
  return r;
}

Report baseline_report() {
  Report r;
  r.meta.gpu_name = "NVIDIA H200";
  r.meta.sm_count = 132;
  r.meta.timing_mode = "graph";
  for (int p : {1, 2, 4}) {
    r.rows.push_back(row("decode_a", "b1_n4096", p, 40.0 / p));
    r.rows.push_back(row("decode_b", "b1_n4096", p, 45.0 / p));
    r.rows.push_back(row("decode_a", "b8_n1024", p, 20.0 + p));
  }
  return r;
}

Report scaled(Report r, double factor) {
  for (ResultRow& row : r.rows) {
    row.time.median_us *= factor;
    row.time.min_us *= factor;
    row.time.mean_us *= factor;
    row.time.stdev_us *= factor;
  }
  return r;
}

TEST(Compare, IdenticalReportsHaveNoRegression) {
  const Report base = baseline_report();
  const CompareResult r = compare_reports(base, base, {});
  EXPECT_EQ(r.pairs.size(), base.rows.size());
  EXPECT_EQ(r.count(Verdict::kSame), static_cast<int>(base.rows.size()));
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_TRUE(r.only_baseline.empty() && r.only_candidate.empty());
}

TEST(Compare, TenPercentSlowerIsARegression) {
  const CompareResult r = compare_reports(baseline_report(), scaled(baseline_report(), 1.10), {});
  EXPECT_EQ(r.count(Verdict::kSlower), static_cast<int>(r.pairs.size()));
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NEAR(r.pairs[0].change, 0.10, 1e-12);
  const std::string md = compare_markdown(r);
  EXPECT_NE(md.find("### Regressions"), std::string::npos);
  EXPECT_NE(md.find("+10.0%"), std::string::npos);
  EXPECT_EQ(md.find("### Improvements"), std::string::npos);
}

TEST(Compare, FasterIsAnImprovementNotARegression) {
  const CompareResult r = compare_reports(baseline_report(), scaled(baseline_report(), 0.85), {});
  EXPECT_EQ(r.count(Verdict::kFaster), static_cast<int>(r.pairs.size()));
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(compare_markdown(r).find("### Improvements"), std::string::npos);
}

TEST(Compare, ChangeWithinThresholdOrNoiseIsSame) {
  EXPECT_EQ(compare_reports(baseline_report(), scaled(baseline_report(), 1.02), {}).exit_code(), 0);
  // 6% slower but each row has a 20% spread over 10 samples: 3 standard errors is ~34%.
  Report base, cand;
  base.rows.push_back(row("k", "p", 1, 100, 0.20, 10));
  cand.rows.push_back(row("k", "p", 1, 106, 0.20, 10));
  CompareResult r = compare_reports(base, cand, {});
  EXPECT_EQ(r.pairs[0].verdict, Verdict::kSame);
  EXPECT_GT(r.pairs[0].tolerance, 0.06);
  // The same change on quiet rows is a regression.
  base.rows[0] = row("k", "p", 1, 100, 0.005, 100);
  cand.rows[0] = row("k", "p", 1, 106, 0.005, 100);
  r = compare_reports(base, cand, {});
  EXPECT_EQ(r.pairs[0].verdict, Verdict::kSlower);
  EXPECT_DOUBLE_EQ(r.pairs[0].tolerance, 0.03);
}

TEST(Compare, PassedToIncorrectIsAlwaysARegression) {
  Report cand = scaled(baseline_report(), 0.5);  // faster, but wrong
  cand.rows[3].status = Status::kIncorrect;
  cand.rows[3].reason = "rel_l2_error 0.4 > 0.01";
  cand.rows[4].status = Status::kFailed;
  cand.rows[4].reason = "cudaErrorLaunchOutOfResources";
  const CompareResult r = compare_reports(baseline_report(), cand, {});
  EXPECT_EQ(r.count(Verdict::kBroken), 2);
  EXPECT_EQ(r.exit_code(), 1);
  const std::string md = compare_markdown(r);
  EXPECT_NE(md.find("passed -> incorrect: rel_l2_error 0.4 > 0.01"), std::string::npos) << md;
  // Broken rows lead the regressions table even when other rows are slower.
  Report slow_and_broken = scaled(baseline_report(), 1.5);
  slow_and_broken.rows[5].status = Status::kIncorrect;
  const std::string md2 = compare_markdown(compare_reports(baseline_report(), slow_and_broken, {}));
  const size_t table = md2.find("### Regressions");
  EXPECT_LT(md2.find("passed -> incorrect", table), md2.find("+50.0%", table));
}

TEST(Compare, FixedRowsAndOneSidedRows) {
  Report base = baseline_report();
  base.rows[0].status = Status::kIncorrect;
  Report cand = baseline_report();
  cand.rows.pop_back();
  cand.rows.push_back(row("decode_c", "b1_n4096", 1, 30));
  const CompareResult r = compare_reports(base, cand, {});
  EXPECT_EQ(r.count(Verdict::kFixed), 1);
  ASSERT_EQ(r.only_baseline.size(), 1u);
  ASSERT_EQ(r.only_candidate.size(), 1u);
  EXPECT_EQ(r.only_candidate[0].kernel, "decode_c");
  EXPECT_EQ(r.exit_code(), 1);  // the missing baseline point
  const std::string md = compare_markdown(r);
  EXPECT_NE(md.find("### Only in baseline (1)"), std::string::npos);
  EXPECT_NE(md.find("### Only in candidate (1)"), std::string::npos);
}

TEST(Compare, MissingBaselinePointsAreARegressionUnlessAllowed) {
  Report cand = baseline_report();
  cand.rows.resize(1);  // 8 of the 9 baseline points missing, the one left unchanged
  CompareResult r = compare_reports(baseline_report(), cand, {});
  EXPECT_EQ(r.regressions(), 0);
  EXPECT_EQ(r.missing_failures(), 8);
  EXPECT_EQ(r.exit_code(), 1);
  std::string md = compare_markdown(r);
  EXPECT_NE(md.find("**FAIL** (0 regressions, 8 baseline points missing from the candidate)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("1 of 9 baseline points matched in the candidate; 8 only in the baseline"),
            std::string::npos)
      << md;
  CompareOptions allow;
  allow.allow_missing = true;
  r = compare_reports(baseline_report(), cand, allow);
  EXPECT_EQ(r.exit_code(), 0);
  md = compare_markdown(r);
  EXPECT_NE(md.find("**PASS**"), std::string::npos) << md;
  EXPECT_NE(md.find("(allowed: --allow-missing)"), std::string::npos) << md;
}

TEST(Compare, NoMatchedPairFailsEvenWithAllowMissing) {
  Report cand = baseline_report();
  for (ResultRow& row : cand.rows) row.problem.name += "_paged16";  // another suite entirely
  CompareOptions allow;
  allow.allow_missing = true;
  for (const CompareOptions& o : {CompareOptions{}, allow}) {
    const CompareResult r = compare_reports(baseline_report(), cand, o);
    EXPECT_TRUE(r.pairs.empty());
    EXPECT_EQ(r.exit_code(), 1);
    const std::string md = compare_markdown(r);
    EXPECT_NE(md.find("**FAIL**"), std::string::npos) << md;
    EXPECT_NE(md.find("no pair matched"), std::string::npos) << md;
    EXPECT_NE(md.find("0 of 9 baseline points matched"), std::string::npos) << md;
  }
  // An empty candidate (a sweep that measured nothing) fails too.
  Report empty = baseline_report();
  empty.rows.clear();
  EXPECT_EQ(compare_reports(baseline_report(), empty, allow).exit_code(), 1);
}

TEST(Compare, MethodMismatchIsRefusedUnlessAllowed) {
  const Report base = baseline_report();  // graph timing, cold cache, separate reduce
  auto with = [&](auto change) {
    Report r = baseline_report();
    change(r.meta);
    return r;
  };
  const Report stream = with([](RunMetadata& m) { m.timing_mode = "stream"; });
  const Report warm = with([](RunMetadata& m) { m.cold_cache = false; });
  const Report fused = with([](RunMetadata& m) { m.reduce_mode = "fused"; });
  for (const Report* cand : {&stream, &warm, &fused}) {
    EXPECT_EQ(method_mismatches(base.meta, cand->meta).size(), 1u);
    EXPECT_THROW(compare_reports(base, *cand, {}), UsageError);
  }
  try {
    compare_reports(base, fused, {}, "base.json", "cand.json");
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cand.json: metadata.reduce_mode: 'fused' differs from 'separate'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("--allow-method-mismatch"), std::string::npos) << what;
  }
  CompareOptions allow;
  allow.allow_method_mismatch = true;
  const CompareResult r = compare_reports(base, fused, allow);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(compare_markdown(r).find("**Measured differently** (--allow-method-mismatch): "
                                     "reduce_mode is `separate` in the baseline, `fused`"),
            std::string::npos);
}

TEST(Compare, DifferentGpuIsRefusedUnlessAllowed) {
  Report other = baseline_report();
  other.meta.gpu_name = "NVIDIA A100-SXM4-80GB";
  EXPECT_THROW(compare_reports(baseline_report(), other, {}), UsageError);
  CompareOptions allow;
  allow.allow_different_gpu = true;
  const CompareResult r = compare_reports(baseline_report(), other, allow);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(compare_markdown(r).find("Different GPUs"), std::string::npos);
}

TEST(Compare, RunCompareExitCodesAndFiles) {
  const std::string base = temp_path("base.json"), slow = temp_path("slow.json");
  const std::string csv = temp_path("pairs.csv"), md = temp_path("summary.md");
  const Report b = baseline_report();
  const Report s = scaled(baseline_report(), 1.10);
  write_report_json(base, b.meta, b.rows);
  write_report_json(slow, s.meta, s.rows);
  EXPECT_EQ(run_compare(base, base, {}, "", ""), 0);
  EXPECT_EQ(run_compare(base, slow, {}, csv, md), 1);
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_NE(line.find(",slower,"), std::string::npos) << line;
  }
  EXPECT_EQ(lines, static_cast<int>(b.rows.size()));
  EXPECT_TRUE(std::filesystem::exists(md));
  // Unusable input is a UsageError (exit 2), not a pass.
  EXPECT_THROW(run_compare(temp_path("nope.json"), base, {}, "", ""), UsageError);
  std::ofstream(temp_path("bad.json")) << "{\"schema_version\": 1}";
  EXPECT_THROW(run_compare(base, temp_path("bad.json"), {}, "", ""), UsageError);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(Compare, APassedRowWithoutATimeMakesTheReportUnusable) {
  // Every median NaN, inf, 0 or negative in a candidate of passed rows used to pass the gate as
  // "not comparable (neither passed)".
  for (double bad : {std::nan(""), static_cast<double>(INFINITY), 0.0, -1.0}) {
    Report cand = baseline_report();
    for (ResultRow& r : cand.rows) r.time.median_us = bad;
    try {
      compare_reports(baseline_report(), cand, {}, "base.json", "cand.json");
      ADD_FAILURE() << "passed with median_us " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "cand.json: point 'decode_a|b1_n4096|p1' passed with median_us"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(compare_reports(cand, baseline_report(), {}, "cand.json", "base.json"),
                 UsageError);
  }
  // A row that did not pass carries no time: still compared as broken, not refused.
  Report cand = baseline_report();
  cand.rows[0].status = Status::kIncorrect;
  cand.rows[0].time.median_us = 0;
  EXPECT_EQ(compare_reports(baseline_report(), cand, {}).count(Verdict::kBroken), 1);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(Compare, APointTwiceInAReportIsRefused) {
  // The later duplicate in a candidate silently won: which row the gate compared was an accident.
  Report cand = baseline_report();
  cand.rows.push_back(cand.rows[0]);
  cand.rows.back().time.median_us *= 10;
  try {
    compare_reports(baseline_report(), cand, {}, "base.json", "cand.json");
    ADD_FAILURE() << "a duplicate point was compared";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cand.json: rows[0] and rows[9] are both point 'decode_a|b1_n4096|p1'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(compare_reports(cand, baseline_report(), {}), UsageError);
}

TEST(Compare, AReportWithoutAReduceModeIsMeasuredDifferently) {
  // Read without the field, a report was taken for `separate`; it is `unknown`, a method mismatch.
  const std::string path = temp_path("no_reduce_mode.json");
  Report r = baseline_report();
  nlohmann::json j = report_to_json(r.meta, r.rows);
  j["metadata"].erase("reduce_mode");
  std::ofstream(path) << j.dump();
  const Report old = read_report_json(path);
  EXPECT_EQ(old.meta.reduce_mode, "unknown");
  r.meta.reduce_mode = "separate";
  EXPECT_THROW(compare_reports(r, old, {}), UsageError);
  CompareOptions allow;
  allow.allow_method_mismatch = true;
  EXPECT_EQ(compare_reports(r, old, allow).exit_code(), 0);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(Compare, TheBestGateJudgesEachProblemsBestPoint) {
  // Every point but each problem's best 10% slower: the points gate fails, the best gate passes.
  const Report base = baseline_report();
  Report cand = base;
  for (ResultRow& r : cand.rows) {
    const bool is_best =
        (r.problem.name == "b1_n4096" && r.kernel == "decode_a" && r.partitions == 4) ||
        (r.problem.name == "b8_n1024" && r.partitions == 1);
    if (!is_best) r.time.median_us *= 1.10;
  }
  CompareOptions best;
  best.gate = CompareOptions::Gate::kBest;
  EXPECT_EQ(compare_reports(base, cand, {}).exit_code(), 1);
  const CompareResult r = compare_reports(base, cand, best);
  ASSERT_EQ(r.best.size(), 2u);
  EXPECT_EQ(r.best_count(Verdict::kSame), 2);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NEAR(r.best_geomean_ratio, 1.0, 1e-12);
  EXPECT_NEAR(r.geomean_ratio, std::pow(1.10, 7.0 / 9.0), 1e-9);  // 7 of 9 pairs 10% slower
  EXPECT_NE(compare_markdown(r).find("best point per problem: 1.0000 over 2 problem(s)"),
            std::string::npos);
  // A problem's best point 10% slower, or a problem with no passed point: the best gate fails.
  const CompareResult slower = compare_reports(base, scaled(base, 1.10), best);
  EXPECT_EQ(slower.best_count(Verdict::kSlower), 2);
  EXPECT_EQ(slower.exit_code(), 1);
  Report gone = base;
  for (ResultRow& row : gone.rows)
    if (row.problem.name == "b8_n1024") row.status = Status::kIncorrect;
  const CompareResult broken = compare_reports(base, gone, best);
  EXPECT_EQ(broken.best_count(Verdict::kBroken), 1);
  EXPECT_EQ(broken.exit_code(), 1);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

// Samples of a point: a centre and a spread, reproducible.
std::vector<double> samples_around(double us, double spread, int n, int seed) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i)
    out.push_back(us + spread * (((i * 7 + seed * 13) % n) / double(n) - 0.5));
  return out;
}

TEST(Compare, SamplesSplitARealShiftFromAnAmbiguousOne) {
  Report base, cand;
  base.meta.gpu_name = cand.meta.gpu_name = "NVIDIA H200";
  base.meta.timing_mode = cand.meta.timing_mode = "graph";
  base.rows = {row("decode_a", "b1_n4096", 1, 10.0), row("decode_a", "b1_n4096", 2, 10.0)};
  cand.rows = {row("decode_a", "b1_n4096", 1, 11.0), row("decode_a", "b1_n4096", 2, 11.0)};
  auto bs = std::make_shared<SamplesByPoint>(), cs = std::make_shared<SamplesByPoint>();
  const std::string shifted = point_key(base.rows[0]), overlapping = point_key(base.rows[1]);
  (*bs)[shifted] = samples_around(10.0, 0.2, 20, 1);  // 10% apart, tight: a shift
  (*cs)[shifted] = samples_around(11.0, 0.2, 20, 2);
  (*bs)[overlapping] = {10.0, 10.0, 30.0, 30.0, 10.0, 30.0};  // medians apart, samples not
  (*cs)[overlapping] = {11.0, 11.0, 30.0, 30.0, 11.0, 9.0};
  CompareOptions o;
  const CompareResult without = compare_reports(base, cand, o);
  EXPECT_EQ(without.count(Verdict::kSlower), 2);
  o.baseline_samples = bs;
  o.candidate_samples = cs;
  const CompareResult with = compare_reports(base, cand, o);
  ASSERT_EQ(with.pairs.size(), 2u);
  EXPECT_EQ(with.pairs[0].verdict, Verdict::kSlower);
  EXPECT_LT(with.pairs[0].p_value, 1e-4);
  EXPECT_EQ(with.pairs[1].verdict, Verdict::kAmbiguous);
  EXPECT_GT(with.pairs[1].p_value, 0.01);
  EXPECT_EQ(with.regressions(), 1);  // ambiguous is named, not a regression
  const std::string md = compare_markdown(with);
  EXPECT_NE(md.find("| ambiguous: past the tolerance"), std::string::npos) << md;
  EXPECT_NE(md.find("### Ambiguous"), std::string::npos) << md;
  EXPECT_NE(compare_csv(with).find(",p_value,"), std::string::npos);
}

TEST(Compare, ThrottledPairsAreNamed) {
  Report base = baseline_report(), cand = baseline_report();
  cand.rows[2].throttled = true;
  const std::string md = compare_markdown(compare_reports(base, cand, {}));
  EXPECT_NE(md.find("### Throttled while timed (1"), std::string::npos) << md;
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

const char* const kTunedKernel =
    "decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s3_wsk";
const char* const kOtherKernel =
    "decode_bf16_bf16_d128_g4_contig_null_bm8_bn64_bk32_wm8_wn16_t128_s3_wsk";

// A table whose one entry for Llama-3-8B's family chooses the tuned kernel at 4 partitions.
std::shared_ptr<DefaultsTable> tuned_table(int sm_count = 132) {
  auto t = std::make_shared<DefaultsTable>();
  t->sm_count = sm_count;
  t->origin = "tuned.json";
  DefaultsEntry e;
  e.work_half_octave = half_octave(8);
  e.keys_half_octave = half_octave(1024);
  e.kernel = kTunedKernel;
  e.partitions = 4;
  e.is_measured = true;
  t->families.push_back({family_name("bf16", 128, 4, "contig", "null", false), {e}});
  return t;
}

Report tuned_report(double tuned_us, double other_us) {
  Report r;
  r.meta.gpu_name = "NVIDIA H200";
  r.meta.sm_count = 132;
  r.meta.timing_mode = "graph";
  r.rows = {row(kTunedKernel, "b1_n1024", 4, tuned_us), row(kOtherKernel, "b1_n1024", 1, other_us)};
  return r;
}

TEST(Compare, TheDefaultGateJudgesTheTablesChoice) {
  CompareOptions o;
  o.defaults = tuned_table();
  o.gate = CompareOptions::Gate::kDefault;
  // The tuned point 10% slower while another point got faster: the best moved little, the
  // default regressed.
  const CompareResult r = compare_reports(tuned_report(10, 12), tuned_report(11, 9), o);
  ASSERT_EQ(r.defaults.size(), 1u);
  EXPECT_EQ(r.defaults[0].verdict, Verdict::kSlower);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(compare_markdown(r).find("### Problems whose tuned default regressed"),
            std::string::npos);
  // Gone from the candidate: broken.
  Report gone = tuned_report(10, 12);
  gone.rows.erase(gone.rows.begin());
  EXPECT_EQ(compare_reports(tuned_report(10, 12), gone, o).defaults[0].verdict, Verdict::kBroken);
  // Unchanged: passes.
  EXPECT_EQ(compare_reports(tuned_report(10, 12), tuned_report(10, 12), o).exit_code(), 0);
  // A table whose every choice the baseline never measured gates nothing: fails.
  Report unmeasured = tuned_report(10, 12);
  unmeasured.rows.erase(unmeasured.rows.begin());
  EXPECT_EQ(compare_reports(unmeasured, unmeasured, o).exit_code(), 1);
}

TEST(Compare, TheDefaultGateJudgesAFamilyTheTableOnlyModels) {
  // No entry for the problem's family (group 4); the model fitted group 8's tiles, among them the
  // tuned kernel's. The library asks that model for the shape, so the gate judges its choice
  // (P 4 on the tuned tile), not nothing.
  auto t = std::make_shared<DefaultsTable>();
  t->sm_count = 132;
  t->origin = "modelled.json";
  KernelTraits g8 = testing::llama_traits();
  g8.group = 8;
  g8.stages = 3;
  g8.warp_split_k = true;
  ASSERT_EQ(tile_id(g8), "bm16_bn64_bk32_wm16_wn16_t128_s3_wsk");  // the tuned kernel's tile
  t->model =
      testing::slow_blocks_model(g8, "decode_bf16_bf16_d128_g8_contig_null_" + tile_id(g8), {1, 4});
  CompareOptions o;
  o.defaults = t;
  o.gate = CompareOptions::Gate::kDefault;
  const CompareResult r = compare_reports(tuned_report(10, 12), tuned_report(11, 9), o);
  ASSERT_EQ(r.defaults.size(), 1u);
  EXPECT_EQ(r.defaults[0].baseline_us, 10);
  EXPECT_EQ(r.defaults[0].verdict, Verdict::kSlower);
  // Without the model the table answers nothing for the family: no default to gate, a failure.
  t->model.tiles.clear();
  EXPECT_EQ(compare_reports(tuned_report(10, 12), tuned_report(11, 9), o).exit_code(), 1);
}

TEST(Compare, TheDefaultGateNeedsATableOfThisGpu) {
  CompareOptions o;
  o.gate = CompareOptions::Gate::kDefault;
  EXPECT_THROW(compare_reports(tuned_report(10, 12), tuned_report(10, 12), o), UsageError);
  o.defaults = tuned_table(114);  // an H100's
  EXPECT_THROW(compare_reports(tuned_report(10, 12), tuned_report(10, 12), o), UsageError);
}

}  // namespace
}  // namespace mha
