// Splitting one sweep across GPUs: a static, deterministic assignment of points to shards (one
// process per GPU or machine, e.g. a Slurm array) and a pull-based work queue (several GPUs
// driven by one process). Both balance by an estimated cost per point, largest first (LPT).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result_row.h"

namespace mha {

// One point of a sweep: its point_key(kernel, problem name, partitions) and a cost estimate in
// the units of point_cost (only ratios matter).
struct SweepPoint {
  std::string key;
  double cost_estimate = 0;
};

// A proxy for a point's time, in bytes: the visible K/V the step reads plus a fixed overhead per
// point worth about 40 us at the H200's 4.4 TB/s (launches, verification, sampling set-up), so
// that many tiny points are not treated as free. Ragged batches count every sequence at `keys`.
double point_cost(const ProblemShape& shape, int partitions);

// The most shards a sweep is cut into (a slice per GPU of a cluster, not per point): what --shard
// and a report's metadata may claim, before anything is sized by it.
constexpr int kMaxShards = 4096;

// "--shard K/N": run the K-th of N shards, 0 <= K < N <= kMaxShards.
struct ShardSpec {
  int index = 0;
  int count = 1;
};
// Throws UsageError naming the flag and the value, e.g. "--shard '3/2': K must be in [0, N)".
ShardSpec parse_shard(const std::string& text);

// The shard of each point (same order as `points`). Points sorted by (cost descending, key) go
// one by one to the least-loaded shard, ties to the lowest index: the result depends on the set
// of points only, not their order, so every shard's process computes the same assignment. A key
// given twice gets one shard. Max load <= min load + the largest single cost.
// Throws UsageError when num_shards < 1.
std::vector<int> assign_shards(const std::vector<SweepPoint>& points, int num_shards);

// Does point `point` (an index into the points given to assign_shards) belong to `shard`?
bool in_shard(const std::vector<int>& assignment, size_t point, int shard);

// The keys shard `shard.index` of `shard.count` runs (what a sweep filters its points with).
std::set<std::string> shard_keys(const std::vector<SweepPoint>& points, const ShardSpec& shard);

// Hands points to worker threads (one per GPU), largest first; thread-safe. A worker loops on
// next(w) until it returns nothing; calling next(w) again means w finished its previous point.
// When a worker's GPU fails, the caller records the point it held as failed and calls
// retire(w): the rest of the work goes to the other workers, since nothing was assigned ahead.
class WorkQueue {
 public:
  explicit WorkQueue(const std::vector<SweepPoint>& points);

  // The index (into the constructor's points) of the next point for `worker`, or nothing when
  // the worker is retired or all work is done. Waits while nothing is pending but another worker
  // still holds a point, because that point may yet be requeued.
  std::optional<size_t> next(int worker);
  // Puts a handed-out point back (e.g. it was never started); it keeps its place in LPT order.
  void requeue(size_t point);
  // `worker` takes no more points; the point it held counts as done (the caller recorded it).
  void retire(int worker);
  // Points not yet handed out (non-zero after every worker retired: work nobody could run).
  size_t pending() const;

 private:
  void release_locked(int worker);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<size_t> order_;                // rank -> point index (LPT order)
  std::vector<size_t> rank_of_;              // point index -> rank
  std::set<size_t> pending_;                 // ranks not handed out
  std::vector<std::optional<size_t>> held_;  // worker -> point it is running
  std::set<int> retired_;
};

}  // namespace mha
