// select's outputs: the JSON (--out-json) and the printed summary.
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
#include "reports/time_model.h"

namespace mha {

using nlohmann::json;

json selection_to_json(const Selection& s) {
  json buckets = json::array();
  for (const BucketChoice& b : s.buckets) {
    buckets.push_back(json{{"bucket", bucket_name(b.key)},
                           {"dtype", b.key.dtype},
                           {"depth", b.key.depth},
                           {"group", b.key.group},
                           {"kv", b.key.kv},
                           {"mask", b.key.mask},
                           {"work_units", b.key.work_units},
                           {"ragged", b.key.ragged},
                           {"length_log2", b.key.length_log2},
                           {"q_len", b.key.q_len},
                           {"min_keys", 1 << b.key.length_log2},
                           {"max_keys", (2 << b.key.length_log2) - 1},
                           {"kernel", b.kernel},
                           {"tile", tile_to_json(b.traits)},
                           {"partitions", b.partitions},
                           {"split", split_label(b.partitions)},
                           {"ragged_plan", b.ragged_plan},
                           {"problems", b.problems},
                           {"covered", b.covered},
                           {"geomean_cost", b.geomean_cost},
                           {"worst_cost", b.worst_cost}});
  }
  json problems = json::array();
  for (const ProblemCost& c : s.problems) {
    problems.push_back(json{{"problem", c.problem},
                            {"keys", c.keys},
                            {"best_us", c.best_us},
                            {"best_kernel", c.best_kernel},
                            {"best_partitions", c.best_partitions},
                            {"cost", c.cost},
                            {"rule_cost", c.rule_cost},
                            {"model_cost", c.model_cost}});
  }
  // A holdout list, each entry named by what was held out (`key`: "keys" or "half").
  auto holdout_json = [](const std::vector<HoldoutCost>& list) {
    json out = json::array();
    for (const HoldoutCost& h : list) {
      json e{{"held_out", h.held_out},
             {"problems", h.problems},
             {"uncovered", h.uncovered},
             {"geomean_cost", h.geomean_cost},
             {"worst_cost", h.worst_cost},
             {"model_uncovered", h.model_uncovered},
             {"model_geomean_cost", h.model_geomean_cost},
             {"model_worst_cost", h.model_worst_cost}};
      if (h.keys > 0) e["keys"] = h.keys;
      if (h.half >= 0) e["half"] = h.half;
      out.push_back(e);
    }
    return out;
  };
  const json holdout = holdout_json(s.holdout);
  const json ragged_holdout = holdout_json(s.ragged_holdout);
  json rules = json::array();
  for (const SplitRuleCost& c : s.split_rules) {
    json per_problem = json::array();
    for (const SplitRuleProblem& d : c.details) {
      per_problem.push_back(json{{"problem", d.problem},
                                 {"partitions", d.partitions},
                                 {"measured_partitions", d.measured_partitions},
                                 {"snapped", d.is_snapped},
                                 {"measured", d.is_measured},
                                 {"lengths_known", d.is_lengths_known},
                                 {"cost", d.cost}});
    }
    rules.push_back(json{{"rule", c.rule},
                         {"problems", c.problems},
                         {"not_measured", c.not_measured},
                         {"snapped", c.snapped},
                         {"geomean_cost", c.geomean_cost},
                         {"worst_cost", c.worst_cost},
                         {"per_problem", per_problem}});
  }
  return json{{"schema_version", 1},
              {"gpu_name", s.gpu_name},
              {"sm_count", s.sm_count},
              {"sources", s.sources},
              {"partition_rule",
               {{"formula",
                 "min(ceil(alpha * sm_count / work_units), keys / min_keys_per_partition), "
                 "clamped to [1, max_partitions]; work_units = batch * kv_heads"},
                {"alpha", s.rule.alpha},
                {"min_keys_per_partition", s.rule.min_keys_per_partition},
                {"max_partitions", s.rule.max_partitions},
                {"fitted", s.rule.is_fitted},
                {"geomean_cost", s.rule_geomean_cost},
                {"worst_cost", s.rule_worst_cost}}},
              {"buckets", buckets},
              {"cost",
               {{"definition", "time of the selected default / best time measured for the problem"},
                {"geomean", s.geomean_cost},
                {"worst", s.worst_cost},
                {"problems", problems},
                {"holdout_definition",
                 "refit without the held-out problems; geomean_cost/worst_cost: the table's "
                 "lookup (nearest bucket and the partition rule); model_*: the defaults "
                 "(choose_default: a measured bucket, else the time model, else the table)"},
                {"holdout_by_length", holdout},
                {"ragged_holdout_by_half", ragged_holdout},
                {"holdout_by_batch", holdout_json(s.batch_holdout)},
                {"holdout_by_family", holdout_json(s.family_holdout)},
                {"holdout_by_q_len", holdout_json(s.q_len_holdout)}}},
              {"failed_problems", s.failed_problems},
              {"untuned_buckets", s.untuned_buckets},
              {"time_model", time_model_to_json(s.model)},
              {"split_rules",
               {{"definition",
                 "each rule's partitions with the bucket default's tile, at the nearest measured "
                 "partitions within a factor 2 (snapped when not the rule's own); cost = that "
                 "time / best time measured for the problem; problems with none within a factor "
                 "2 are not measured and left out"},
                {"rules", rules}}}};
}

std::string selection_summary(const Selection& s) {
  std::string out = fmt::format("Defaults for {} ({} SMs) from {} bucket(s), {} problem(s)\n\n",
                                s.gpu_name, s.sm_count, s.buckets.size(), s.problems.size());
  out +=
      "| bucket | tile | P | problems | covered | geomean | worst |\n"
      "|---|---|---:|---:|---:|---:|---:|\n";
  for (const BucketChoice& b : s.buckets) {
    out += fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.3f} |\n", bucket_name(b.key),
                       tile_id(b.traits), split_label(b.partitions), b.problems, b.covered,
                       b.geomean_cost, b.worst_cost);
  }
  out += fmt::format(
      "\nPartition rule ({}): alpha {}, min keys per partition {}, max partitions {}; "
      "cost with each bucket's tile: geomean {:.3f}, worst {:.3f}\n",
      s.rule.is_fitted ? "fitted" : "default", s.rule.alpha, s.rule.min_keys_per_partition,
      s.rule.max_partitions, s.rule_geomean_cost, s.rule_worst_cost);
  out += fmt::format("Cost of the defaults (time / best measured): geomean {:.3f}, worst {:.3f}\n",
                     s.geomean_cost, s.worst_cost);
  out += time_model_summary(s.model);
  auto holdout_table = [&out](const std::vector<HoldoutCost>& list, const std::string& title) {
    if (list.empty()) return;
    out += "\n" + title +
           "\n\n| held out | problems | table geomean | table worst | defaults geomean | defaults "
           "worst | uncovered |\n|---|---:|---:|---:|---:|---:|---:|\n";
    auto cost = [](int priced, double c) { return priced > 0 ? fmt::format("{:.3f}", c) : "—"; };
    for (const HoldoutCost& h : list) {
      const int table_priced = h.problems - h.uncovered,
                model_priced = h.problems - h.model_uncovered;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", h.held_out, h.problems,
                         cost(table_priced, h.geomean_cost), cost(table_priced, h.worst_cost),
                         cost(model_priced, h.model_geomean_cost),
                         cost(model_priced, h.model_worst_cost), h.model_uncovered);
    }
  };
  const std::string how =
      " (refit without them; table: nearest bucket and the rule; defaults: the time model where no "
      "bucket was measured):";
  holdout_table(s.holdout, "Each length held out" + how);
  holdout_table(s.batch_holdout, "Each batch size held out" + how);
  holdout_table(s.family_holdout, "Each kernel family held out" + how);
  holdout_table(s.q_len_holdout, "Each query length held out (multi-token problems)" + how);
  holdout_table(s.ragged_holdout,
                "Ragged batches held out by halves (alternate mixes; refit on the other half and "
                "every uniform problem)" +
                    how);
  if (!s.failed_problems.empty())
    out += fmt::format("\n{} problem(s) with no passed row, left untuned: {}\n",
                       s.failed_problems.size(), fmt::join(s.failed_problems, ", "));
  if (!s.untuned_buckets.empty())
    out += fmt::format(
        "untuned bucket(s) (no other problem measured them; the time model or the "
        "table answers there): {}\n",
        fmt::join(s.untuned_buckets, ", "));
  if (!s.split_rules.empty()) {
    out +=
        "\nSplit rules on the bucket defaults' tiles (cost = time / best measured; P snapped to "
        "the nearest measured within a factor 2):\n\n"
        "| rule | problems | geomean | worst | snapped | not measured |\n"
        "|---|---:|---:|---:|---:|---:|\n";
    for (const SplitRuleCost& c : s.split_rules) {
      out += fmt::format("| {} | {} | {:.3f} | {:.3f} | {} | {} |\n", c.rule, c.problems,
                         c.geomean_cost, c.worst_cost, c.snapped, c.not_measured);
    }
    const std::vector<SplitRuleProblem>& details = s.split_rules.front().details;
    const auto unknown =
        std::count_if(details.begin(), details.end(),
                      [](const SplitRuleProblem& d) { return !d.is_lengths_known; });
    // The report keeps a long ragged list as "ragged<n>x<max>": rules that read every length
    // (flashinfer) see n sequences of the max length there.
    if (unknown > 0)
      out += fmt::format(
          "\n{} ragged problem(s) without their lengths in the report: every sequence taken at "
          "the max length (flashinfer counts chunks per sequence)\n",
          unknown);
  }
  return out;
}

}  // namespace mha
