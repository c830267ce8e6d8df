// The Mann-Whitney U test: ranks of the pooled samples (ties share their mean rank), U of the
// first side, and its normal approximation.
#include "reports/rank_test.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mha {

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return 1.0;
  struct Value {
    double x;
    bool first;
  };
  std::vector<Value> pooled;
  pooled.reserve(a.size() + b.size());
  for (double x : a) pooled.push_back({x, true});
  for (double x : b) pooled.push_back({x, false});
  std::sort(pooled.begin(), pooled.end(), [](const Value& l, const Value& r) { return l.x < r.x; });
  double rank_sum = 0, tie_term = 0;  // ranks of a; sum of t^3 - t over the groups of ties
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].x == pooled[i].x) ++j;
    const double t = static_cast<double>(j - i), mean_rank = (i + 1 + j) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].first) rank_sum += mean_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double u = rank_sum - n1 * (n1 + 1) / 2, n = n1 + n2;
  const double variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) return 1.0;  // every value tied: no evidence either way
  const double z = std::max(0.0, std::fabs(u - n1 * n2 / 2) - 0.5) / std::sqrt(variance);
  return std::erfc(z / std::sqrt(2.0));
}

}  // namespace mha
