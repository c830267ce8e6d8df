// Sample statistics and the noise-based stopping rule (see stats.h for the choice of noise).
#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mha {

namespace {
// sigma = kMadToSigma * MAD = IQR / kIqrToSigma for normal data.
constexpr double kMadToSigma = 1.4826;
constexpr double kIqrToSigma = 1.349;  // IQR = 1.349 sigma for normal data
// Relative stdev of a MAD (or IQR) estimate of sigma from n normal samples: about 1.17 / sqrt(n)
// (these estimators are ~37% efficient: 1.65 / sqrt(2 n)).
constexpr double kSigmaRelativeError = 1.17;
}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t n = values.size();
  const size_t mid = n / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

double min_value(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return *std::min_element(values.begin(), values.end());
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double sample_stdev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double sum_sq = 0;
  for (double v : values) sum_sq += (v - m) * (v - m);
  return std::sqrt(sum_sq / static_cast<double>(values.size() - 1));
}

double median_abs_deviation(const std::vector<double>& values) {
  if (values.empty()) return 0;
  const double m = median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::fabs(v - m));
  return median(std::move(dev));
}

TimingStats summarize_us(const std::vector<double>& samples_us) {
  TimingStats t;
  t.median_us = median(samples_us);
  t.min_us = min_value(samples_us);
  t.mean_us = mean(samples_us);
  t.stdev_us = sample_stdev(samples_us);
  t.q1_us = quantile(samples_us, 0.25);
  t.q3_us = quantile(samples_us, 0.75);
  t.samples = static_cast<int>(samples_us.size());
  t.samples_us = samples_us;
  return t;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double robust_sigma(const std::vector<double>& values) {
  const double from_mad = kMadToSigma * median_abs_deviation(values);
  const double from_iqr = (quantile(values, 0.75) - quantile(values, 0.25)) / kIqrToSigma;
  return std::max(from_mad, from_iqr);
}

double relative_median_error(const std::vector<double>& samples_us) {
  if (samples_us.size() < 2) return 0;
  const double m = median(samples_us);
  if (!(m > 0)) return 0;
  const double n = static_cast<double>(samples_us.size());
  // An upper estimate of sigma (one standard deviation of its estimate above it): with 10-20
  // samples the spread is often underestimated by a third; without the margin, 1 in 5 runs of a
  // 2%-noise kernel stop at the minimum count (tests/test_stats.cpp).
  const double sigma = robust_sigma(samples_us) * (1.0 + kSigmaRelativeError / std::sqrt(n));
  return kMedianSeFactor * sigma / std::sqrt(n) / m;
}

SampleCollector::SampleCollector(StoppingCriteria criteria) : criteria_(criteria) {
  criteria_.min_samples = std::max(criteria_.min_samples, 1);
  criteria_.max_samples = std::max(criteria_.max_samples, criteria_.min_samples);
}

void SampleCollector::add_sample_us(double sample_us, double elapsed_s) {
  samples_us_.push_back(sample_us);
  const int n = static_cast<int>(samples_us_.size());
  // Order matters only for the reason recorded: convergence is the outcome we want to report.
  if (n >= criteria_.min_samples && relative_error() < criteria_.target_relative_error) {
    reason_ = StopReason::kConverged;
  } else if (n >= criteria_.max_samples) {
    reason_ = StopReason::kMaxSamples;
  } else if (elapsed_s >= criteria_.time_budget_s) {
    reason_ = StopReason::kTimeBudget;
  }
}

double SampleCollector::relative_error() const { return relative_median_error(samples_us_); }

}  // namespace mha
