// Sample statistics of timing samples (median, min, mean, sample stdev, MAD) and the stopping rule
// that decides when a point has been measured enough. Pure functions: no clocks, no CUDA.
#pragma once

#include <string>
#include <vector>

#include "common/result_row.h"

namespace mha {

// se(median) = kMedianSeFactor * sigma / sqrt(n) for normal samples (sqrt(pi / 2)).
constexpr double kMedianSeFactor = 1.2533;

// Each returns 0 for an empty input (sample_stdev: for fewer than two samples).
double median(std::vector<double> values);
double min_value(const std::vector<double>& values);
double mean(const std::vector<double>& values);
double sample_stdev(const std::vector<double>& values);          // n - 1 in the denominator
double median_abs_deviation(const std::vector<double>& values);  // median |x - median|, unscaled
double quantile(std::vector<double> values, double q);  // linear interpolation, q in [0, 1]
// max(1.4826 * MAD, IQR / 1.349): the stdev for normal data, blind to a few outliers. Either
// estimate alone comes out low too often with 10-20 samples; the larger of the two less so.
double robust_sigma(const std::vector<double>& values);

// median, min, mean, stdev and count of samples in microseconds.
TimingStats summarize_us(const std::vector<double>& samples_us);

// Relative standard error of the median, from a robust spread: sigma = robust_sigma (equal to
// the stdev for normal data, but one slow outlier - a clock dip, a preempted replay - does not
// move it), raised by 1.17 / sqrt(n) of itself (its own uncertainty, so that a lucky low spread
// from few samples does not stop early), and se(median) = 1.2533 * sigma / sqrt(n); divided by
// the median. Unlike stdev/mean it falls as samples accumulate, so a target on it is reachable for
// a kernel whose sample spread is a few percent, and it measures what the report uses: how well the
// median is known. 0 for fewer than two samples or a non-positive median.
double relative_median_error(const std::vector<double>& samples_us);

struct StoppingCriteria {
  int min_samples = 10;
  int max_samples = 2000;
  // Stop once the median is known to 0.5% (one standard error): well under compare's 3% default
  // threshold, so run-to-run differences come from the GPU, not from too few samples.
  double target_relative_error = 0.005;
  double time_budget_s = 0.5;  // wall time per point, warm-up excluded
};

enum class StopReason { kNotStopped, kConverged, kTimeBudget, kMaxSamples };

// Feed samples one at a time; ask `should_stop` after each. The caller owns the clock and passes
// the wall time spent on this point so far, so the rule itself stays deterministic and testable.
//   SampleCollector c(criteria);
//   while (!c.should_stop()) c.add_sample_us(time_one_sample(), seconds_since_start());
//   row.time = c.stats();
class SampleCollector {
 public:
  explicit SampleCollector(StoppingCriteria criteria = {});

  void add_sample_us(double sample_us, double elapsed_s);
  bool should_stop() const { return reason_ != StopReason::kNotStopped; }
  StopReason reason() const { return reason_; }
  double relative_error() const;  // relative_median_error of the samples so far
  TimingStats stats() const { return summarize_us(samples_us_); }
  const std::vector<double>& samples_us() const { return samples_us_; }

 private:
  StoppingCriteria criteria_;
  std::vector<double> samples_us_;
  StopReason reason_ = StopReason::kNotStopped;
};

}  // namespace mha
