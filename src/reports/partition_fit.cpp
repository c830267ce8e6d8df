// select's fit of the partition rule (common/partition_rule.h) on measured problems (a grid over
// alpha and the keys per partition), and the file `sweep --rule` reads the fitted rule from.
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
#include "reports/report_json.h"
#include "reports/select_internal.h"

namespace mha {

using nlohmann::json;

namespace {

// The grid the rule is fitted on: alpha in blocks per SM, and the keys one partition must hold.
constexpr double kAlphaGrid[] = {0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0};
constexpr int kMinKeysGrid[] = {32, 64, 128, 256, 512, 1024, 2048, 4096};

}  // namespace

// Geometric-mean and worst cost of `rule` over `problems`, each with its bucket's tile.
static RuleFit rule_cost(const PartitionRule& rule, const Subset& problems,
                         const std::vector<BucketChoice>& buckets, int sm_count) {
  double log_sum = 0, worst = 0;
  int n = 0;
  for (const MeasuredProblem* q : problems) {
    const BucketChoice* b = exact_bucket(buckets, q->bucket);
    if (!b) continue;
    const int p = auto_partitions(
        rule, sm_count,
        rule_work_units(q->bucket.work_units, q->bucket.group * q->bucket.q_len, b->traits.bm),
        q->shape.keys);
    const double t = time_near(*q, tile_id(b->traits), p);
    if (t < 0) continue;
    const double cost = t / q->best_us;
    log_sum += std::log(cost);
    worst = std::max(worst, cost);
    ++n;
  }
  RuleFit fit;
  fit.rule = rule;
  fit.geomean = n ? std::exp(log_sum / n) : 1.0;
  fit.worst = n ? worst : 1.0;
  return fit;
}

RuleFit fit_rule(const Subset& problems, const std::vector<BucketChoice>& buckets, int sm_count,
                 int max_partitions) {
  RuleFit best;
  bool has_best = false;
  for (int min_keys : kMinKeysGrid) {
    for (double alpha : kAlphaGrid) {
      PartitionRule rule{alpha, min_keys, max_partitions, true};
      const RuleFit fit = rule_cost(rule, problems, buckets, sm_count);
      if (!has_best || fit.geomean < best.geomean - 1e-12 ||
          (std::fabs(fit.geomean - best.geomean) <= 1e-12 && fit.worst < best.worst - 1e-12)) {
        best = fit;
        has_best = true;
      }
    }
  }
  return best;
}

PartitionRule read_partition_rule(const std::string& path) {
  const json j = read_json_file(path, "the defaults file");
  if (!j.contains("partition_rule") || !j["partition_rule"].is_object())
    throw UsageError(
        fmt::format("{}: partition_rule: missing (not a `mha-tune select` output?)", path));
  const json& r = j.at("partition_rule");
  PartitionRule rule;
  try {
    rule.alpha = r.at("alpha").get<double>();
    rule.min_keys_per_partition = r.at("min_keys_per_partition").get<int>();
    rule.max_partitions = r.at("max_partitions").get<int>();
    rule.is_fitted = r.at("fitted").get<bool>();
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: partition_rule: {}", path, e.what()));
  }
  if (rule.alpha <= 0 || rule.min_keys_per_partition < 1 || rule.max_partitions < 1)
    throw UsageError(fmt::format(
        "{}: partition_rule: alpha, min_keys_per_partition and max_partitions must be positive",
        path));
  return rule;
}

}  // namespace mha
