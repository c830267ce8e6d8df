// Regression comparison of two reports: rows matched by (kernel, problem, partitions), each pair
// classified faster / slower / same with a noise-aware tolerance, a status check that makes any
// passed -> not-passed change a regression, and a markdown summary for pull requests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reports/report_json.h"
#include "reports/samples_file.h"

namespace mha {

struct NoiseFloor;     // noise_floor.h
struct DefaultsTable;  // defaults_table.h

struct CompareOptions {
  // A pair is slower when candidate > baseline * (1 + tolerance), faster when
  // candidate < baseline / (1 + tolerance), with tolerance = max(threshold, noise_k * noise) and
  // noise the combined relative standard error of the two medians (see pair_noise).
  double threshold = 0.03;
  // Three standard errors: a pair of equally fast kernels is called slower by chance about once
  // in 700 pairs. The 3% floor usually dominates; the term matters for noisy rows (few samples or
  // a large spread), which should not fail CI on their noise alone.
  double noise_k = 3.0;
  bool allow_different_gpu = false;
  // Baseline points the candidate lacks are regressions unless allowed (a filtered or sharded
  // candidate): a gate that passes on what it did not measure passes on nothing.
  bool allow_missing = false;
  // Reports measured differently (timing mode, cold/warm cache, reduce mode) time different
  // things; comparing them is a usage error unless allowed.
  bool allow_method_mismatch = false;
  // Measured cross-machine spread (`compare --noise`): a pair's tolerance is at least the
  // floor's tolerance for its baseline time. Null: no floor.
  std::shared_ptr<const NoiseFloor> noise_floor;
  // What fails the gate: every point (a regression of any point), or the best point of each
  // problem (what a tuned default can reach; an A/B of a kernel change is judged by it).
  // ... or the point a defaults table chooses for each problem (kDefault, needs `defaults`).
  enum class Gate { kPoints, kBest, kDefault } gate = Gate::kPoints;
  // A defaults table (`compare --defaults`, select --out-defaults): its choice per problem is
  // judged like a pair too (CompareResult::defaults).
  std::shared_ptr<const DefaultsTable> defaults;
  // Each side's samples (`compare --samples`, samples_file.h). Where both sides have them for a
  // pair, its move must also be a shift by the rank test: p < alpha. A move past the tolerance
  // that the test does not confirm is `ambiguous` (named, not a regression).
  std::shared_ptr<const SamplesByPoint> baseline_samples, candidate_samples;
  double alpha = 0.01;
};

// How a report was measured: the metadata fields that change what a time means. A difference in
// any of them makes two reports' times incomparable.
struct MethodMismatch {
  std::string field, baseline, candidate;
};
std::vector<MethodMismatch> method_mismatches(const RunMetadata& baseline,
                                              const RunMetadata& candidate);

enum class Verdict {
  kFaster,
  kSlower,  // regression
  kSame,
  kBroken,         // baseline passed, candidate did not: regression
  kFixed,          // baseline did not pass, candidate did: improvement
  kNotComparable,  // neither passed, or a passed row without a usable time
  kAmbiguous,      // moved past the tolerance, but the samples show no shift (p >= alpha)
};
const char* verdict_name(Verdict v);

struct ComparePair {
  std::string key;
  ResultRow baseline;
  ResultRow candidate;
  double change = 0;     // candidate median / baseline median - 1 (0 when not comparable)
  double tolerance = 0;  // max(threshold, noise_k * noise) used for this pair
  double p_value = -1;   // the rank test's, where both sides have samples (-1: not tested)
  Verdict verdict = Verdict::kSame;
  bool is_regression() const { return verdict == Verdict::kSlower || verdict == Verdict::kBroken; }
};

// One problem's best passed point on each side (least median), judged like a pair.
struct BestPair {
  std::string problem;
  std::string baseline_point, candidate_point;  // point keys
  double baseline_us = 0, candidate_us = 0;
  double tolerance = 0;
  Verdict verdict =
      Verdict::kSame;  // kSlower, kFaster, kSame; kBroken: none passed in the candidate
};

struct CompareResult {
  RunMetadata baseline_meta, candidate_meta;
  std::string baseline_file, candidate_file;
  CompareOptions options;
  std::vector<ComparePair> pairs;  // in baseline row order
  std::vector<ResultRow> only_baseline, only_candidate;
  std::vector<MethodMismatch> mismatches;  // only when options.allow_method_mismatch
  std::vector<BestPair> best;              // problems with a passed point in the baseline, by name
  std::vector<BestPair> defaults;          // the defaults table's points (options.defaults)
  double geomean_ratio = 0;       // candidate / baseline over the pairs both timed (0: none)
  double best_geomean_ratio = 0;  // the same over the problems' best points
  int best_count(Verdict v) const;
  int defaults_count(Verdict v) const;

  int count(Verdict v) const;
  int regressions() const { return count(Verdict::kSlower) + count(Verdict::kBroken); }
  // Baseline points absent from the candidate that fail the gate (0 with allow_missing).
  int missing_failures() const {
    return options.allow_missing ? 0 : static_cast<int>(only_baseline.size());
  }
  // The gate fails (1) on a regression, on a missing baseline point (unless allowed) and when no
  // pair matched at all (even with allow_missing: nothing was compared); else 0.
  // With gate kBest, a problem's best point slower or gone fails it, and so does no problem
  // compared.
  bool is_failure() const {
    if (options.gate == CompareOptions::Gate::kBest)
      return best_count(Verdict::kSlower) + best_count(Verdict::kBroken) > 0 || best.empty();
    if (options.gate == CompareOptions::Gate::kDefault)
      return defaults_count(Verdict::kSlower) + defaults_count(Verdict::kBroken) > 0 ||
             defaults.size() == static_cast<size_t>(defaults_count(Verdict::kNotComparable));
    return regressions() > 0 || missing_failures() > 0 || pairs.empty();
  }
  int exit_code() const { return is_failure() ? 1 : 0; }
};

// Combined relative standard error of two medians: sqrt(e_a^2 + e_b^2), e = 1.2533 * stdev /
// (median * sqrt(samples)) per row (the standard error of a median of normal samples).
double pair_noise(const TimingStats& a, const TimingStats& b);

// Throws UsageError when the GPU names differ and options.allow_different_gpu is false, or when
// the reports were measured differently and options.allow_method_mismatch is false.
CompareResult compare_reports(const Report& baseline, const Report& candidate,
                              const CompareOptions& options, const std::string& baseline_file = "",
                              const std::string& candidate_file = "");

// Counts, then regressions worst first, then improvements, then rows on one side only.
std::string compare_markdown(const CompareResult& result);
// Every pair and every one-sided row, one CSV line each.
std::string compare_csv(const CompareResult& result);

// Reads both reports, compares, prints the markdown to stdout, writes the optional files and
// returns the exit code (0 or 1, see CompareResult::exit_code). Throws UsageError (exit 2) on
// unusable input.
int run_compare(const std::string& baseline_path, const std::string& candidate_path,
                const CompareOptions& options, const std::string& csv_path,
                const std::string& markdown_path);

}  // namespace mha
