// Host tests for the split-K combine algebra (kernels/online_softmax.cuh): partitions computed
// online in log2 units and combined as kernels/splitk_reduce.cuh does must equal a float64
// softmax over all keys, with the sink in the denominator once, for any number of partitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "kernels/online_softmax.cuh"

namespace mha {
namespace {

constexpr int kD = 4;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Partial {
  float m = -INFINITY, l = 0.f;
  std::vector<float> o = std::vector<float>(kD, 0.f);  // normalised by l
};

// One partition's keys [begin, end), processed online as the decode kernel does.
Partial run_partition(const std::vector<float>& s, const std::vector<float>& v, int begin,
                      int end) {
  Partial p;
  std::vector<float> acc(kD, 0.f);
  for (int j = begin; j < end; ++j) {
    const float x = s[j] * kLog2e;
    const float m_new = fmaxf(p.m, x);
    const float r = rescale(p.m, m_new), w = exp2f(x - exp_base(m_new));
    p.l = p.l * r + w;
    for (int c = 0; c < kD; ++c) acc[c] = acc[c] * r + w * v[j * kD + c];
    p.m = m_new;
  }
  for (int c = 0; c < kD; ++c) p.o[c] = p.l > 0.f ? acc[c] / p.l : 0.f;
  return p;
}

// The combine of normalised partials, on the host, through the kernels' merge (SoftmaxMerge).
std::vector<float> combine(const std::vector<Partial>& parts, std::optional<float> sink) {
  std::vector<float> out(kD);
  for (int c = 0; c < kD; ++c) {
    SoftmaxMerge merged(sink ? *sink * kLog2e : -INFINITY);
    for (const auto& p : parts) merged.take_max(p.m);
    if (sink) merged.start_sum_at_sink(*sink * kLog2e);
    for (const auto& p : parts) {
      const float w = partition_weight(p.m, p.l, merged.m);
      merged.add_weight(w);
      merged.add_output(w, p.o[c]);
    }
    out[c] = merged.normalised();
  }
  return out;
}

std::vector<double> direct(const std::vector<float>& s, const std::vector<float>& v,
                           std::optional<float> sink) {
  double m = sink ? *sink : -kInf;
  for (float x : s) m = std::max(m, double(x));
  std::vector<double> out(kD, 0.0);
  if (m == -kInf) return out;
  double denom = sink ? std::exp(*sink - m) : 0.0;
  for (size_t j = 0; j < s.size(); ++j) {
    const double w = std::exp(double(s[j]) - m);
    denom += w;
    for (int c = 0; c < kD; ++c) out[c] += w * v[j * kD + c];
  }
  for (auto& x : out) x /= denom;
  return out;
}

// Splits [0, n) at the given cut points (sorted, may repeat: empty partitions).
void check(const std::vector<float>& s, const std::vector<float>& v, std::vector<int> cuts,
           std::optional<float> sink, const char* what) {
  cuts.insert(cuts.begin(), 0);
  cuts.push_back(static_cast<int>(s.size()));
  std::vector<Partial> parts;
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    parts.push_back(run_partition(s, v, cuts[i], cuts[i + 1]));
  const auto got = combine(parts, sink);
  const auto want = direct(s, v, sink);
  std::vector<float> abs_v(v);
  for (auto& x : abs_v) x = std::abs(x);
  const auto size = direct(s, abs_v, sink);  // magnitude of the terms: a relative tolerance
  for (int c = 0; c < kD; ++c) {
    ASSERT_TRUE(std::isfinite(got[c])) << what << " P=" << parts.size();
    EXPECT_NEAR(got[c], want[c], 1e-30 + 1e-5 * size[c])
        << what << " P=" << parts.size() << " col " << c;
  }
}

TEST(OnlineSoftmax, CombineEqualsDirectSoftmaxForAnyPartitioning) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (float magnitude : {1.f, 10.f, 100.f}) {
    const int n = 40;
    std::vector<float> s(n), v(n * kD);
    for (auto& x : s) x = magnitude * normal(rng);
    for (auto& x : v) x = normal(rng);
    s[3] = s[17] = -INFINITY;  // masked keys
    if (magnitude == 100.f) {
      s[5] = 100.f;
      s[30] = -100.f;
    }
    for (std::optional<float> sink :
         {std::optional<float>{}, std::optional<float>{0.5f}, std::optional<float>{s[5] + 60.f},
          std::optional<float>{s[5] - 60.f}}) {
      for (int P : {1, 2, 3, 5, 8, 40, 64}) {
        std::vector<int> cuts;
        for (int i = 1; i < P; ++i) cuts.push_back(std::min(n, i * ((n + P - 1) / P)));
        check(s, v, cuts, sink, "even");
      }
      check(s, v, {0, 0, 10, 10, 10, 40, 40}, sink, "empty partitions");
      check(s, v, {3, 4, 17, 18}, sink, "partitions of one masked key");
    }
  }
}

TEST(OnlineSoftmax, SinkIsCountedOnceWhateverP) {
  // Every score equal to the sink: output = mean(v) * n / (n + 1) for any P.
  const int n = 6;
  std::vector<float> s(n, 2.f), v(n * kD);
  for (int j = 0; j < n; ++j)
    for (int c = 0; c < kD; ++c) v[j * kD + c] = float(j + c);
  for (std::vector<int> cuts : {std::vector<int>{}, {3}, {1, 2, 3, 4, 5}, {0, 0, 6, 6}}) {
    check(s, v, cuts, 2.f, "sink once");
    std::vector<Partial> parts;
    cuts.insert(cuts.begin(), 0);
    cuts.push_back(n);
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      parts.push_back(run_partition(s, v, cuts[i], cuts[i + 1]));
    EXPECT_NEAR(combine(parts, 2.f)[0], 2.5 * 6 / 7, 1e-5);
  }
}

TEST(OnlineSoftmax, EmptyStatesStayFinite) {
  EXPECT_EQ(exp_base(-INFINITY), 0.f);
  EXPECT_EQ(rescale(-INFINITY, -INFINITY), 0.f);
  EXPECT_EQ(partition_weight(-INFINITY, 0.f, -INFINITY), 0.f);
  EXPECT_EQ(partition_weight(-INFINITY, 0.f, 5.f), 0.f);
  EXPECT_EQ(sink_weight(-INFINITY, 3.f), 0.f);
  EXPECT_EQ(sink_weight(-INFINITY, -INFINITY), 0.f);  // no sink, no keys
  // All partitions empty, no sink: 0, not NaN.
  const std::vector<float> s(4, -INFINITY), v(4 * kD, 1.f);
  std::vector<Partial> parts(3);
  for (float x : combine(parts, std::nullopt)) EXPECT_EQ(x, 0.f);
  parts = {run_partition(s, v, 0, 2), run_partition(s, v, 2, 4), Partial{}};
  for (float x : combine(parts, std::nullopt)) EXPECT_EQ(x, 0.f);
  // All partitions empty with a sink: the sink takes all the mass, the output is 0.
  for (float x : combine(parts, 1.f)) EXPECT_EQ(x, 0.f);
}

// The epilogue merges its warp copies first and adds the sink after (add_sink, write_rows); the
// cluster's combine takes the sink's max first (start_sum_at_sink). Both are the same softmax.
TEST(OnlineSoftmax, SinkAfterTheMergeEqualsSinkFirst) {
  const float m[3] = {1.5f, -2.f, 4.f}, l[3] = {3.f, 0.5f, 2.f}, o[3] = {0.7f, -1.f, 2.5f};
  for (float sink : {-INFINITY, 0.f, 3.f, 12.f}) {
    SoftmaxMerge after, first(sink);
    for (int i = 0; i < 3; ++i) {
      after.take_max(m[i]);
      first.take_max(m[i]);
    }
    first.start_sum_at_sink(sink);
    for (int i = 0; i < 3; ++i) {
      after.add(rescale(m[i], after.m), l[i], o[i]);
      first.add(rescale(m[i], first.m), l[i], o[i]);
    }
    after.add_sink(sink);
    EXPECT_EQ(after.m, first.m) << sink;
    EXPECT_NEAR(after.l, first.l, 1e-6f * first.l) << sink;
    EXPECT_NEAR(after.normalised(), first.normalised(), 1e-6f) << sink;
  }
}

}  // namespace
}  // namespace mha
