// Cost model, LPT shard assignment, --shard parsing and the multi-GPU work queue.
#include "sweep/sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <utility>

#include "api/split_plan.h"
#include "common/errors.h"
#include "common/kinds.h"

namespace mha {

namespace {

// 40 us at 4.4 TB/s (docs/design.md's H200 streaming-read peak): per-point work that does not scale
// with the keys (launches, the verification pass, sampling set-up).
constexpr double kPointOverheadBytes = 40e-6 * 4.4e12;

// Keys the mask leaves visible to the last query of a sequence of n keys (docs/design.md's masks).
double visible_keys(const ProblemShape& s, int n) {
  const MaskKind mask = mask_from_name(s.mask);
  if (mask == MaskKind::kWindow && s.window > 0) return std::min(n, s.window);
  if (mask == MaskKind::kChunked && s.chunk > 0) return n - ((n - 1) / s.chunk) * s.chunk;
  return n;
}

// LPT order: indices of `points` by (cost descending, key ascending); ties of both by index so
// that the sort is total (identical points are interchangeable anyway).
std::vector<size_t> lpt_order(const std::vector<SweepPoint>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto cost = [&](size_t i) {
    const double c = points[i].cost_estimate;
    return std::isfinite(c) && c > 0 ? c : 0.0;  // a bad estimate must not break the ordering
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (cost(a) != cost(b)) return cost(a) > cost(b);
    if (points[a].key != points[b].key) return points[a].key < points[b].key;
    return a < b;
  });
  return order;
}

}  // namespace

double point_cost(const ProblemShape& shape, int partitions) {
  const double kv_bytes = double(shape.batch) * visible_keys(shape, std::max(shape.keys, 0)) *
                          shape.kv_heads * shape.depth * 4;
  // Partials each partition writes and the reduce reads back (fp32 o, m, l per query head); a
  // cluster split keeps them on chip.
  const double partial_bytes =
      partitions > 1 && !is_cluster_split(partitions)
          ? 2.0 * shape.batch * shape.q_len * shape.heads * partitions * (shape.depth + 2) * 4
          : 0.0;
  return kv_bytes + partial_bytes + kPointOverheadBytes;
}

ShardSpec parse_shard(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("--shard '{}': {}", text, why));
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad("expected K/N, e.g. 0/8");
  auto number = [&](const std::string& s, const char* name) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) {
      throw bad(fmt::format("{} must be a non-negative integer", name));
    }
    return std::stoi(s);
  };
  ShardSpec spec;
  spec.index = number(text.substr(0, slash), "K");
  spec.count = number(text.substr(slash + 1), "N");
  if (spec.count < 1) throw bad("N must be at least 1");
  if (spec.count > kMaxShards) throw bad(fmt::format("N must be at most {}", kMaxShards));
  if (spec.index >= spec.count) throw bad("K must be in [0, N)");
  return spec;
}

std::vector<int> assign_shards(const std::vector<SweepPoint>& points, int num_shards) {
  if (num_shards < 1)
    throw UsageError(fmt::format("shard count {} must be at least 1", num_shards));
  using Load = std::pair<double, int>;  // (load, shard): the smallest pair is the least loaded
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> loads;
  for (int s = 0; s < num_shards; ++s) loads.push({0.0, s});
  std::vector<int> shard(points.size(), -1);
  std::map<std::string, int> shard_of_key;
  for (size_t i : lpt_order(points)) {
    auto known = shard_of_key.find(points[i].key);
    if (known != shard_of_key.end()) {  // a repeated key runs once, where its first copy runs
      shard[i] = known->second;
      continue;
    }
    Load least = loads.top();
    loads.pop();
    shard[i] = least.second;
    shard_of_key.emplace(points[i].key, least.second);
    const double c = points[i].cost_estimate;
    least.first += std::isfinite(c) && c > 0 ? c : 0.0;
    loads.push(least);
  }
  return shard;
}

bool in_shard(const std::vector<int>& assignment, size_t point, int shard) {
  return point < assignment.size() && assignment[point] == shard;
}

std::set<std::string> shard_keys(const std::vector<SweepPoint>& points, const ShardSpec& shard) {
  const std::vector<int> assignment = assign_shards(points, shard.count);
  std::set<std::string> keys;
  for (size_t i = 0; i < points.size(); ++i) {
    if (assignment[i] == shard.index) keys.insert(points[i].key);
  }
  return keys;
}

WorkQueue::WorkQueue(const std::vector<SweepPoint>& points)
    : order_(lpt_order(points)), rank_of_(points.size()) {
  for (size_t r = 0; r < order_.size(); ++r) {
    rank_of_[order_[r]] = r;
    pending_.insert(r);
  }
}

void WorkQueue::release_locked(int worker) {
  if (worker >= 0 && static_cast<size_t>(worker) < held_.size()) held_[worker].reset();
}

std::optional<size_t> WorkQueue::next(int worker) {
  if (worker < 0) throw std::invalid_argument("WorkQueue::next: negative worker index");
  std::unique_lock<std::mutex> lock(mutex_);
  if (held_.size() <= static_cast<size_t>(worker)) held_.resize(worker + 1);
  release_locked(worker);
  changed_.notify_all();  // others may be waiting for this worker's point to finish
  auto others_busy = [&] {
    return std::any_of(held_.begin(), held_.end(), [](const auto& h) { return h.has_value(); });
  };
  changed_.wait(lock,
                [&] { return retired_.count(worker) || !pending_.empty() || !others_busy(); });
  if (retired_.count(worker) || pending_.empty()) return std::nullopt;
  const size_t point = order_[*pending_.begin()];
  pending_.erase(pending_.begin());
  held_[worker] = point;
  return point;
}

void WorkQueue::requeue(size_t point) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (point >= rank_of_.size()) throw std::out_of_range("WorkQueue::requeue: no such point");
  for (auto& h : held_) {
    if (h == point) h.reset();
  }
  pending_.insert(rank_of_[point]);
  changed_.notify_all();
}

void WorkQueue::retire(int worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  retired_.insert(worker);
  release_locked(worker);
  changed_.notify_all();
}

size_t WorkQueue::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

}  // namespace mha
