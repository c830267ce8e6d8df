// select's buckets: a problem's bucket key, the (tile, split) each bucket chooses by geometric-mean
// cost, and the table's lookup (the bucket, else the nearest one and the partition rule).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "api/split_plan.h"
#include "common/errors.h"
#include "reports/select_internal.h"

namespace mha {

int select_ilog2(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

std::vector<BucketChoice> choose_buckets(const Subset& problems) {
  std::map<BucketKey, Subset> by_bucket;
  for (const MeasuredProblem* q : problems) by_bucket[q->bucket].push_back(q);
  std::vector<BucketChoice> out;
  for (const auto& [key, members] : by_bucket) {
    // candidate (tile, partitions) -> (covered, sum log cost, worst, a row)
    struct Score {
      int covered = 0;
      double log_sum = 0, worst = 0;
      const ResultRow* row = nullptr;
    };
    std::map<std::pair<std::string, int>, Score> scores;
    // Candidates are fixed partition counts, split plans and cluster splits alike: a bucket of
    // ragged batches may choose a plan, one of short uniform steps a cluster split.
    for (const MeasuredProblem* q : members) {
      for (const auto* table : {&q->times, &q->plan_times, &q->cluster_times}) {
        for (const auto& [tile, by_p] : *table) {
          for (const auto& [p, us] : by_p) {
            Score& s = scores[{tile, p}];
            const double cost = us / q->best_us;
            ++s.covered;
            s.log_sum += std::log(cost);
            s.worst = std::max(s.worst, cost);
            if (!s.row) s.row = q->tile_rows.at(tile);
          }
        }
      }
    }
    // Most problems covered first (a choice never measured on a shape is a guess), then the
    // lowest geometric mean, then fewer partitions (one launch less when P = 1; plans, which
    // are negative, first; cluster splits, encoded above every count, last), then the name.
    const std::pair<const std::pair<std::string, int>, Score>* best = nullptr;
    for (const auto& entry : scores) {
      if (!best) {
        best = &entry;
        continue;
      }
      const Score& a = entry.second;
      const Score& b = best->second;
      const double ga = a.log_sum / a.covered, gb = b.log_sum / b.covered;
      if (a.covered != b.covered
              ? a.covered > b.covered
              : (std::fabs(ga - gb) > 1e-12 ? ga < gb : entry.first.second < best->first.second)) {
        best = &entry;
      }
    }
    BucketChoice c;
    c.key = key;
    c.kernel = best->second.row->kernel;
    c.traits = best->second.row->traits;
    c.partitions = best->first.second;
    if (key.ragged) {  // the best plan on the chosen tile, by the same order
      const std::pair<const std::pair<std::string, int>, Score>* plan = nullptr;
      for (const auto& entry : scores) {
        if (entry.first.first != best->first.first || !is_split_plan(entry.first.second)) continue;
        const Score& a = entry.second;
        if (!plan || a.covered > plan->second.covered ||
            (a.covered == plan->second.covered &&
             a.log_sum / a.covered < plan->second.log_sum / plan->second.covered - 1e-12)) {
          plan = &entry;
        }
      }
      if (plan) c.ragged_plan = plan->first.second;
    }
    c.problems = static_cast<int>(members.size());
    c.covered = best->second.covered;
    c.geomean_cost = std::exp(best->second.log_sum / best->second.covered);
    c.worst_cost = best->second.worst;
    out.push_back(std::move(c));
  }
  return out;
}

const BucketChoice* exact_bucket(const std::vector<BucketChoice>& buckets, const BucketKey& k) {
  auto it =
      std::lower_bound(buckets.begin(), buckets.end(), k,
                       [](const BucketChoice& c, const BucketKey& key) { return c.key < key; });
  return it != buckets.end() && it->key == k ? &*it : nullptr;
}

// Raggedness weighs most: whether one split fits the whole batch decides more than the cache kind.
// A different cache kind weighs most: a tile that suits contiguous caches can be 1.2-1.5x slower
// on paged ones (docs/performance.md). Raggedness decides the split more than the tile,
// and a ragged batch takes its plan from a ragged bucket (lookup_config).
int bucket_distance(const BucketKey& a, const BucketKey& b) {
  return 16 * (a.kv != b.kv) + 8 * (a.ragged != b.ragged) + 4 * (a.mask != b.mask) +
         2 * std::abs(select_ilog2(a.group) - select_ilog2(b.group)) +
         std::abs(select_ilog2(a.work_units) - select_ilog2(b.work_units)) +
         2 * std::abs(select_ilog2(a.q_len) - select_ilog2(b.q_len)) +
         std::abs(a.length_log2 - b.length_log2);
}

int length_log2(int keys) { return select_ilog2(keys); }

bool BucketKey::operator<(const BucketKey& o) const {
  return std::tie(dtype, depth, group, kv, mask, work_units, length_log2, ragged, q_len) <
         std::tie(o.dtype, o.depth, o.group, o.kv, o.mask, o.work_units, o.length_log2, o.ragged,
                  o.q_len);
}

bool BucketKey::operator==(const BucketKey& o) const { return !(*this < o) && !(o < *this); }

BucketKey bucket_of(const ProblemShape& p) {
  BucketKey b;
  b.dtype = dtype_key(p.dtype, p.kv_dtype, p.soft_cap > 0, multi_token_step(p));
  b.depth = p.depth;
  b.group = p.kv_heads > 0 ? p.heads / p.kv_heads : p.heads;
  b.kv = p.kv;
  b.mask = p.mask;
  b.work_units = p.batch * p.kv_heads;
  b.length_log2 = length_log2(p.keys);
  b.ragged = is_ragged_batch(p);
  b.q_len = std::max(1, p.q_len);
  return b;
}

bool is_ragged_batch(const ProblemShape& p) {
  if (p.ragged_lengths.empty()) return !p.lengths.empty();  // an older report: named ragged
  const auto [lo, hi] = std::minmax_element(p.ragged_lengths.begin(), p.ragged_lengths.end());
  return *lo != *hi;
}

std::string bucket_name(const BucketKey& b) {
  return fmt::format("{}_d{}_g{}_{}_{}_wu{}_n2^{}{}{}", b.dtype, b.depth, b.group, b.kv, b.mask,
                     b.work_units, b.length_log2, b.ragged ? "_ragged" : "",
                     b.q_len > 1 ? fmt::format("_q{}", b.q_len) : "");
}

ConfigLookup lookup_config(const Selection& s, const std::string& dtype, int depth, int group,
                           const std::string& kv, const std::string& mask, int batch_kv_heads,
                           int keys, int sm_count, bool ragged, int q_len) {
  BucketKey want{
      dtype, depth, group, kv, mask, batch_kv_heads, length_log2(keys), ragged, std::max(1, q_len)};
  ConfigLookup l;
  int best_distance = std::numeric_limits<int>::max();
  int ragged_plan = 0, plan_distance = std::numeric_limits<int>::max();
  for (const BucketChoice& b : s.buckets) {  // sorted: ties go to the first, as in the header
    if (b.key.dtype != dtype || b.key.depth != depth) continue;
    const int d = b.key == want ? -1 : bucket_distance(b.key, want);
    if (d < best_distance) {
      best_distance = d;
      l.bucket = &b;
    }
    if (b.ragged_plan != 0 && b.key.kv == kv && d < plan_distance) {
      plan_distance = d;
      ragged_plan = b.ragged_plan;
    }
  }
  if (!l.bucket) return l;
  l.is_exact = best_distance == -1;
  // A plan adapts to the lengths and the SM count when it runs, so it carries over to nearby
  // shapes and other GPUs; a fixed count does not. Held out, ragged batches cost up to 1.34x
  // the best with another kind's bucket's plan and 1.27x with the rule's one count for every
  // sequence (the ragged suite on the H200), hence a ragged bucket's plan of the same kv.
  if (l.is_exact && sm_count == s.sm_count)
    l.partitions = l.bucket->partitions;
  else if (ragged && ragged_plan != 0)
    l.partitions = ragged_plan;
  else if (is_split_plan(l.bucket->partitions))
    l.partitions = l.bucket->partitions;
  else
    l.partitions = auto_partitions(
        s.rule, sm_count, rule_work_units(batch_kv_heads, group * want.q_len, l.bucket->traits.bm),
        keys);
  return l;
}

}  // namespace mha
