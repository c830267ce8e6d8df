// The Mann-Whitney U test of src/reports/rank_test.h against the exact permutation p-value of
// small samples (every way to split the pooled values), and its edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "reports/rank_test.h"

namespace mha {
namespace {

// Exact two-sided p: the share of all splits of the pooled values into sizes |a| and |b| whose
// rank-sum statistic is at least as far from its mean as the observed one.
double exact_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  auto u_of = [&](const std::vector<bool>& in_a) {
    double u = 0;
    for (size_t i = 0; i < pooled.size(); ++i)
      for (size_t j = 0; j < pooled.size(); ++j)
        if (in_a[i] && !in_a[j]) u += pooled[i] > pooled[j] ? 1 : pooled[i] == pooled[j] ? 0.5 : 0;
    return u;
  };
  std::vector<bool> observed(pooled.size(), false);
  for (size_t i = 0; i < a.size(); ++i) observed[i] = true;
  const double mean = a.size() * b.size() / 2.0, far = std::fabs(u_of(observed) - mean);
  long long total = 0, extreme = 0;
  std::vector<bool> in_a(pooled.size(), false);
  std::function<void(size_t, size_t)> choose = [&](size_t from, size_t left) {
    if (left == 0) {
      ++total;
      extreme += std::fabs(u_of(in_a) - mean) >= far - 1e-9;
      return;
    }
    for (size_t i = from; i + left <= pooled.size(); ++i) {
      in_a[i] = true;
      choose(i + 1, left - 1);
      in_a[i] = false;
    }
  };
  choose(0, a.size());
  return static_cast<double>(extreme) / total;
}

TEST(RankTest, CloseToTheExactPermutationP) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(10.0, 0.3);
  for (double shift : {0.0, 0.1, 0.3, 0.6}) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<double> a, b;
      for (int i = 0; i < 6; ++i) a.push_back(noise(rng));
      for (int i = 0; i < 7; ++i) b.push_back(noise(rng) + shift);
      EXPECT_NEAR(mann_whitney_p(a, b), exact_p(a, b), 0.02) << "shift " << shift;
    }
  }
}

TEST(RankTest, TiesAndSeparatedSamples) {
  // Quantised times tie often: the tie correction keeps the p close to the exact one.
  const std::vector<double> a = {4.9, 4.9, 5.0, 5.0, 5.0, 5.1}, b = {5.0, 5.1, 5.1, 5.1, 5.2, 5.2};
  EXPECT_NEAR(mann_whitney_p(a, b), exact_p(a, b), 0.02);
  std::vector<double> low, high;
  for (int i = 0; i < 20; ++i) {
    low.push_back(10 + 0.01 * i);
    high.push_back(11 + 0.01 * i);
  }
  EXPECT_LT(mann_whitney_p(low, high), 1e-6);
  EXPECT_DOUBLE_EQ(mann_whitney_p(low, high), mann_whitney_p(high, low));  // two-sided
  EXPECT_GT(mann_whitney_p(low, low), 0.9);
}

TEST(RankTest, NothingToTestIsNoEvidence) {
  EXPECT_EQ(mann_whitney_p({}, {1.0, 2.0}), 1.0);
  EXPECT_EQ(mann_whitney_p({3.0, 3.0}, {3.0, 3.0, 3.0}), 1.0);  // every value tied
}

}  // namespace
}  // namespace mha
