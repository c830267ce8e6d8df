// Shard assignment (complete, disjoint, balanced, order-independent), --shard parsing, the cost
// model and the multi-GPU work queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <random>
#include <thread>

#include "common/errors.h"
#include "sweep/sharding.h"

namespace mha {
namespace {

// A few hundred points whose costs span three orders of magnitude, like a sweep from 512 to
// 128k keys, with some equal costs so that ties are exercised.
std::vector<SweepPoint> synthetic_points(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> exponent(0, 30), bucket(1, 5);
  std::vector<SweepPoint> points;
  for (size_t i = 0; i < n; ++i) {
    const double cost = i % 7 == 0 ? 1000.0 * bucket(rng) : std::pow(1.26, exponent(rng)) * 100.0;
    points.push_back(
        {"kernel_" + std::to_string(i % 13) + "|problem_" + std::to_string(i) + "|p1", cost});
  }
  return points;
}

TEST(Sharding, CompleteDisjointBalanced) {
  const std::vector<SweepPoint> points = synthetic_points(300, 7);
  const double max_cost = std::max_element(points.begin(), points.end(), [](auto& a, auto& b) {
                            return a.cost_estimate < b.cost_estimate;
                          })->cost_estimate;
  for (int n = 1; n <= 9; ++n) {
    const std::vector<int> shard = assign_shards(points, n);
    ASSERT_EQ(shard.size(), points.size());
    std::vector<double> load(n, 0.0);
    for (size_t i = 0; i < points.size(); ++i) {
      ASSERT_GE(shard[i], 0);
      ASSERT_LT(shard[i], n);
      load[shard[i]] += points[i].cost_estimate;
      int owners = 0;  // exactly one shard claims each point
      for (int s = 0; s < n; ++s) owners += in_shard(shard, i, s);
      EXPECT_EQ(owners, 1);
    }
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi, *lo + max_cost) << "N=" << n;
    size_t keys = 0;
    for (int s = 0; s < n; ++s) keys += shard_keys(points, {s, n}).size();
    EXPECT_EQ(keys, points.size()) << "N=" << n;
  }
}

TEST(Sharding, IndependentOfInputOrder) {
  const std::vector<SweepPoint> points = synthetic_points(257, 11);
  std::mt19937 rng(3);
  for (int n = 1; n <= 9; ++n) {
    const std::vector<int> base = assign_shards(points, n);
    std::vector<size_t> perm(points.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<SweepPoint> shuffled;
    for (size_t i : perm) shuffled.push_back(points[i]);
    const std::vector<int> again = assign_shards(shuffled, n);
    for (size_t j = 0; j < perm.size(); ++j)
      EXPECT_EQ(again[j], base[perm[j]]) << points[perm[j]].key;
  }
}

TEST(Sharding, RepeatedKeyGetsOneShard) {
  std::vector<SweepPoint> points = {{"a", 5}, {"b", 5}, {"a", 5}, {"c", 1}};
  const std::vector<int> shard = assign_shards(points, 3);
  EXPECT_EQ(shard[0], shard[2]);
}

TEST(Sharding, ParseShard) {
  EXPECT_EQ(parse_shard("0/1").index, 0);
  EXPECT_EQ(parse_shard("3/8").index, 3);
  EXPECT_EQ(parse_shard("3/8").count, 8);
  try {
    parse_shard("3/2");
    FAIL() << "3/2 accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--shard '3/2': K must be in [0, N)");
  }
  for (const char* bad : {"", "3", "/2", "1/", "-1/2", "1/0", "a/2", "1/2/3", "2/2", " 1/2"}) {
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
  }
  EXPECT_THROW(assign_shards({}, 0), UsageError);
  // --shard 0/999999999 sized a queue of a billion shards (15 GB) and never returned.
  EXPECT_EQ(parse_shard("0/4096").count, kMaxShards);
  try {
    parse_shard("0/999999999");
    FAIL() << "a billion shards accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--shard '0/999999999': N must be at most 4096");
  }
}

TEST(Sharding, CostGrowsWithVisibleKeys) {
  ProblemShape s;
  s.keys = 4096;
  const double full = point_cost(s, 1);
  s.keys = 8192;
  EXPECT_GT(point_cost(s, 1), full);
  s.mask = "window";
  s.window = 1024;
  EXPECT_LT(point_cost(s, 1), full);  // a window reads fewer keys than the whole cache
  s.keys = 1;
  s.mask = "null";
  EXPECT_GT(point_cost(s, 1), 0.0);  // the fixed overhead: tiny points are not free
}

TEST(WorkQueue, ThreadsGetEveryPointOnce) {
  const std::vector<SweepPoint> points = synthetic_points(300, 5);
  WorkQueue queue(points);
  std::vector<std::atomic<int>> taken(points.size());
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      while (auto p = queue.next(w)) taken[*p]++;
    });
  }
  for (auto& t : workers) t.join();
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(taken[i].load(), 1) << i;
  EXPECT_EQ(queue.pending(), 0u);
}

TEST(WorkQueue, LargestFirstAndRequeue) {
  WorkQueue queue({{"small", 1}, {"large", 100}, {"mid", 10}});
  EXPECT_EQ(queue.next(0), std::optional<size_t>(1));
  EXPECT_EQ(queue.next(1), std::optional<size_t>(2));
  queue.requeue(1);  // worker 0 could not start "large": it goes back ahead of "small"
  queue.retire(0);
  EXPECT_EQ(queue.next(0), std::nullopt);  // retired
  EXPECT_EQ(queue.next(1), std::optional<size_t>(1));
  EXPECT_EQ(queue.next(1), std::optional<size_t>(0));
  EXPECT_EQ(queue.next(1), std::nullopt);
}

TEST(WorkQueue, FailedWorkerWorkGoesToOthers) {
  // Worker 0's GPU fails on its first point: it is recorded failed (not requeued) and every
  // other point is run by the survivors.
  const std::vector<SweepPoint> points = synthetic_points(64, 9);
  WorkQueue queue(points);
  std::vector<std::atomic<int>> taken(points.size());
  const std::optional<size_t> failed = queue.next(0);
  ASSERT_TRUE(failed.has_value());
  std::vector<std::thread> workers;
  for (int w = 1; w < 3; ++w) {
    workers.emplace_back([&, w] {
      while (auto p = queue.next(w)) taken[*p]++;
    });
  }
  queue.retire(0);
  for (auto& t : workers) t.join();
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(taken[i].load(), i == *failed ? 0 : 1) << i;
}

TEST(WorkQueue, WaitsForAPointThatMayBeRequeued) {
  // Worker 1 finds the queue empty while worker 0 holds the last point; worker 0 gives it back,
  // and worker 1, still waiting, runs it.
  WorkQueue queue({{"only", 1}});
  ASSERT_EQ(queue.next(0), std::optional<size_t>(0));
  std::optional<size_t> got;
  std::thread waiter([&] { got = queue.next(1); });
  queue.requeue(0);
  queue.retire(0);
  waiter.join();
  EXPECT_EQ(got, std::optional<size_t>(0));
}

}  // namespace
}  // namespace mha
