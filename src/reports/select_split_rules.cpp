// select's pricing of the field's split rules and of the split plan, on the buckets' tiles.
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
#include "reports/split_rules.h"

namespace mha {

namespace {

// Each named split rule on every problem: the bucket default's tile at the rule's P (snapped to
// the nearest measured P within a factor 2), against the best time measured for the problem.
// One split choice priced on every problem that has an exact bucket: `pick(problem, bucket)`
// gives the partitions the choice wants and the time measured for them on the bucket's tile.
template <class Pick>
SplitRuleCost price_split(const std::string& name, const Selection& s, const Subset& problems,
                          Pick pick) {
  SplitRuleCost c;
  c.rule = name;
  double log_sum = 0;
  for (const MeasuredProblem* q : problems) {
    const BucketChoice* b = exact_bucket(s.buckets, q->bucket);
    if (!b) continue;
    SplitRuleProblem d;
    d.problem = q->shape.name;
    sequence_lengths(q->shape, &d.is_lengths_known);
    const auto [wanted, t] = pick(*q, *b);
    d.partitions = wanted;
    d.is_measured = t.is_measured;
    d.is_snapped = t.is_snapped;
    if (t.is_measured) {
      d.measured_partitions = t.partitions;
      d.cost = t.time_us / q->best_us;
      log_sum += std::log(d.cost);
      c.worst_cost = std::max(c.worst_cost, d.cost);
      ++c.problems;
      c.snapped += d.is_snapped;
    } else {
      ++c.not_measured;
    }
    c.details.push_back(d);
  }
  c.geomean_cost = c.problems ? std::exp(log_sum / c.problems) : 0;
  return c;
}

}  // namespace

std::vector<SplitRuleCost> split_rule_costs(const Selection& s, const Subset& problems) {
  std::vector<SplitRuleCost> out;
  for (const SplitRule& rule : split_rules()) {
    out.push_back(
        price_split(rule.name, s, problems, [&](const MeasuredProblem& q, const BucketChoice& b) {
          SplitRuleInput in;
          in.shape = q.shape;
          in.sm_count = s.sm_count;
          in.tile = b.traits;
          in.fitted = s.rule;
          const int wanted = rule.partitions(in);
          const auto it = q.times.find(tile_id(b.traits));
          return std::make_pair(
              wanted, it == q.times.end() ? SnappedTime{} : snap_partitions(it->second, wanted));
        }));
  }
  // Ours: the balanced split plan, with the one knob setting (of those swept) that costs least
  // over the problems measured with it, on the bucket defaults' tiles. Plans are looked up
  // exactly, never snapped.
  std::set<int> codes;
  for (const MeasuredProblem* q : problems)
    for (const auto& [tile, by_code] : q->plan_times)
      for (const auto& [code, us] : by_code) codes.insert(code);
  SplitRuleCost best_plan;
  for (int code : codes) {
    SplitRuleCost c = price_split("plan (" + split_label(code) + ")", s, problems,
                                  [&](const MeasuredProblem& q, const BucketChoice& b) {
                                    SnappedTime t;
                                    t.time_us = time_near(q, tile_id(b.traits), code);
                                    t.is_measured = t.time_us > 0;
                                    t.partitions = code;
                                    return std::make_pair(code, t);
                                  });
    if (c.problems > best_plan.problems ||
        (c.problems == best_plan.problems && c.geomean_cost < best_plan.geomean_cost))
      best_plan = std::move(c);
  }
  if (best_plan.problems > 0) out.push_back(std::move(best_plan));
  return out;
}

}  // namespace mha
