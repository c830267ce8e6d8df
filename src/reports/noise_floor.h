// The cross-machine noise floor of `compare`: from two reports of the same code on two machines
// of one GPU model, the spread of their medians per time range, measured rather than guessed, so
// that a difference within what two machines of one model show is not called a regression.
#pragma once

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/report_json.h"

namespace mha {

constexpr const char* kNoiseFloorFormat = "mha-tune-noise-floor";
constexpr int kNoiseFloorVersion = 1;

// One time range of baseline medians, [min_us, max_us). The first range also covers shorter
// times and the last longer ones.
struct NoiseBucket {
  double min_us = 0, max_us = 0;
  int pairs = 0;
  double quantile_change = 0;  // the quantile of |candidate / baseline - 1| (in log terms)
  double max_change = 0;       // the largest |change| seen, for the record
  double tolerance = 0;        // (1 + quantile_change)^margin - 1: what compare allows
};

struct NoiseOptions {
  // Tolerance = the 99th percentile of |log ratio|, times 1.5: for a Gaussian-like spread that
  // carries the measured 2.58 sigma out to 3.9 sigma (one row in 10^4), so a fresh machine's
  // ~2,000 rows expect well under one false regression, while a 99th percentile alone would
  // flag ~1% of them (the 2.8% of rows beyond 3% that this floor exists for).
  double quantile = 0.99;
  double margin = 1.5;
  // Time ranges are octaves of the median, merged until each holds this many pairs: a high
  // quantile of fewer pairs is mostly the one largest difference.
  int min_bucket_pairs = 30;
  bool allow_different_gpu = false;
};

struct NoiseFloor {
  std::string gpu_name;
  std::string report_a, report_b;  // the two reports it was measured from
  std::string commit_a, commit_b;
  double quantile = 0, margin = 0;
  int pairs = 0;
  std::vector<NoiseBucket> buckets;  // ascending time ranges
  std::vector<std::string> warnings;
  std::string file;  // where it was read from (not stored)

  // The tolerance for a pair whose baseline median is `baseline_us`.
  double tolerance_for(double pair_us) const;  // pair_us: pair_time_us(baseline, candidate)
};

// Pairs the rows both reports passed with a time (matched by point_key), buckets them by the
// first report's median and takes the quantile of |ln(b / a)| per bucket. Throws UsageError when
// the GPU models differ (unless allowed), options are out of range, or fewer than
// options.min_bucket_pairs pairs exist. Different commits or configs add a warning (the floor
// then holds code changes too).
// The time scale of a (baseline, candidate) pair: the geometric mean of the two medians, so that
// the bucket a pair falls in is the same whichever report is the baseline.
inline double pair_time_us(double a_us, double b_us) { return std::sqrt(a_us * b_us); }

NoiseFloor derive_noise_floor(const Report& a, const Report& b, const NoiseOptions& options,
                              const std::string& file_a = "", const std::string& file_b = "");

nlohmann::json noise_floor_to_json(const NoiseFloor& floor);
// Strict: throws UsageError naming the file and the key.
NoiseFloor noise_floor_from_json(const nlohmann::json& j, const std::string& file);
NoiseFloor read_noise_floor(const std::string& path);

// Throws UsageError when the floor was measured on another GPU model than the baseline's.
void check_noise_floor_applies(const NoiseFloor& floor, const RunMetadata& baseline,
                               const std::string& baseline_file);
// Lines for compare's markdown header: where the floor comes from and its tolerance per range.
std::string noise_floor_markdown(const NoiseFloor& floor);
// A plain-text table of the buckets (what `mha-tune noise` prints).
std::string noise_floor_table(const NoiseFloor& floor);

// `mha-tune noise A B --out FILE`: derives, prints the table, writes FILE; returns 0.
int run_noise(const std::string& path_a, const std::string& path_b, const std::string& out_path,
              const NoiseOptions& options);

}  // namespace mha
