// select's outputs: the JSON (--out-json), the C++ header (--out-header) and the printed summary.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "errors.h"
#include "select_internal.h"
#include "split_plan.h"
#include "time_model.h"

namespace mha {

using nlohmann::json;

namespace {

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

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
                {"holdout_by_family", holdout_json(s.family_holdout)}}},
              {"failed_problems", s.failed_problems},
              {"time_model", time_model_to_json(s.model)},
              {"split_rules",
               {{"definition",
                 "each rule's partitions with the bucket default's tile, at the nearest measured "
                 "partitions within a factor 2 (snapped when not the rule's own); cost = that "
                 "time / best time measured for the problem; problems with none within a factor "
                 "2 are not measured and left out"},
                {"rules", rules}}}};
}

std::string selection_header(const Selection& s) {
  std::string h;
  h += "// mha_tune_defaults.h: decode-attention defaults per shape bucket, generated by\n";
  h += fmt::format(
      "// `mha-tune select` from measurements on {} ({} SMs). Do not edit: re-run select.\n",
      s.gpu_name, s.sm_count);
  h += fmt::format(
      "// In-sample cost (time of the default / best measured): geomean {:.4f}, worst {:.4f}.\n",
      s.geomean_cost, s.worst_cost);
  h += R"(#pragma once

#include <cstdint>
#include <cstring>

namespace mha_tune_defaults {

// One bucket: shape (dtype, depth, group = heads / kv_heads, kv, mask, work_units =
// batch * kv_heads, longest sequence in [2^length_log2, 2^(length_log2 + 1)), whether the
// lengths differ) -> tile and partitions.
struct Entry {
  const char* dtype;
  int depth;
  int group;
  const char* kv;
  const char* mask;
  int work_units;
  int length_log2;
  bool ragged;
  int bm, bn, bk, wm, wn, threads, stages;
  bool warp_split_k;
  // > 0: that many equal partitions per sequence; < 0: mha-tune's balanced split plan
  // (src/sweep/split_plan.h) with -partitions = blocks_per_sm * 2^21 + min_chunk_keys.
  int partitions;
  // The partitions (2..8) combine inside the decode launch, in a thread-block cluster
  // (DecodeParams::cluster_combine), instead of a reduce launch.
  bool cluster_combine;
  // Ragged buckets: the best plan on this tile (0: none), for ragged batches of the same kv
  // outside every measured bucket.
  int ragged_plan;
  const char* kernel;  // the measured instance with this tile
};

// entry == nullptr: no bucket of this dtype and depth was measured.
struct Choice {
  const Entry* entry;
  int partitions;
  bool is_exact;         // the shape's own bucket was measured
  bool cluster_combine;  // set DecodeParams::cluster_combine (the bucket's own split only)
};

)";
  h += fmt::format("constexpr int kMeasuredSmCount = {};\n", s.sm_count);
  h += fmt::format("constexpr double kRuleAlpha = {};\n", s.rule.alpha);
  h += fmt::format("constexpr int kRuleMinKeysPerPartition = {};\n", s.rule.min_keys_per_partition);
  h += fmt::format("constexpr int kRuleMaxPartitions = {};\n\n", s.rule.max_partitions);
  h += "constexpr Entry kEntries[] = {\n";
  for (const BucketChoice& b : s.buckets) {
    const KernelTraits& t = b.traits;
    h += fmt::format(
        "    {{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}},\n",
        c_string(b.key.dtype), b.key.depth, b.key.group, c_string(b.key.kv), c_string(b.key.mask),
        b.key.work_units, b.key.length_log2, b.key.ragged ? "true" : "false", t.bm, t.bn, t.bk,
        t.wm, t.wn, t.threads, t.stages, t.warp_split_k ? "true" : "false",
        is_cluster_split(b.partitions) ? split_partitions(b.partitions) : b.partitions,
        is_cluster_split(b.partitions) ? "true" : "false", b.ragged_plan, c_string(b.kernel));
  }
  h += "};\n";
  h += "constexpr int kNumEntries = static_cast<int>(sizeof(kEntries) / sizeof(kEntries[0]));\n";
  h += R"(
inline int ilog2(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

inline int iabs(int x) { return x < 0 ? -x : x; }

// Partitions for a shape no bucket measured on this GPU:
// min(ceil(alpha * sm_count / work_units), keys / min_keys_per_partition) in [1, max].
inline int auto_partitions(int sm_count, int work_units, int keys) {
  if (sm_count <= 0 || work_units <= 0) return 1;
  const double target = kRuleAlpha * sm_count / work_units;
  int p = static_cast<int>(target);
  if (p < target) ++p;
  int by_keys = keys / kRuleMinKeysPerPartition;
  if (by_keys < 1) by_keys = 1;
  if (p > by_keys) p = by_keys;
  if (p > kRuleMaxPartitions) p = kRuleMaxPartitions;
  return p < 1 ? 1 : p;
}

// The shape's bucket if measured; else the nearest bucket of the same dtype and depth (distance:
// kv 16, raggedness 8, mask 4, 2 per octave of group, 1 per octave of work units, 1 per length
// octave) gives the tile, and the partitions are, for a ragged batch, the ragged_plan of the
// nearest ragged bucket of the same kv that has one; else the bucket's plan, else the rule's
// count. The rule also replaces a bucket's count on a GPU with another SM count than the one
// measured. `keys` is the longest sequence; `ragged`: the batch's lengths differ.
inline Choice select_config(const char* dtype, int depth, int group, const char* kv,
                            const char* mask, int batch_kv_heads, int keys, int sm_count,
                            bool ragged = false) {
  Choice c{nullptr, 1, false, false};
  int best = 0x7fffffff;
  int ragged_plan = 0, plan_best = 0x7fffffff;
  const int len = ilog2(keys);
  for (int i = 0; i < kNumEntries; ++i) {
    const Entry& e = kEntries[i];
    if (std::strcmp(e.dtype, dtype) != 0 || e.depth != depth) continue;
    const bool same_kv = std::strcmp(e.kv, kv) == 0;
    const bool same_mask = std::strcmp(e.mask, mask) == 0;
    int d = 16 * !same_kv + 8 * (e.ragged != ragged) + 4 * !same_mask +
            2 * iabs(ilog2(e.group) - ilog2(group)) +
            iabs(ilog2(e.work_units) - ilog2(batch_kv_heads)) + iabs(e.length_log2 - len);
    if (same_kv && same_mask && e.group == group && e.work_units == batch_kv_heads &&
        e.length_log2 == len && e.ragged == ragged) {
      d = -1;
    }
    if (d < best) {
      best = d;
      c.entry = &e;
    }
    if (e.ragged_plan != 0 && same_kv && d < plan_best) {
      plan_best = d;
      ragged_plan = e.ragged_plan;
    }
  }
  if (c.entry == nullptr) return c;
  c.is_exact = best == -1;
  // A plan (partitions < 0) adapts to the lengths and SM count at run time: it carries over.
  if (c.is_exact && sm_count == kMeasuredSmCount) {
    c.partitions = c.entry->partitions;
    c.cluster_combine = c.entry->cluster_combine;
  } else if (ragged && ragged_plan != 0)
    c.partitions = ragged_plan;
  else if (c.entry->partitions < 0)
    c.partitions = c.entry->partitions;
  else
    c.partitions = auto_partitions(sm_count, batch_kv_heads * ((group + c.entry->bm - 1) / c.entry->bm), keys);
  return c;
}

}  // namespace mha_tune_defaults
)";
  return h;
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
  holdout_table(s.ragged_holdout,
                "Ragged batches held out by halves (alternate mixes; refit on the other half and "
                "every uniform problem)" +
                    how);
  if (!s.failed_problems.empty())
    out += fmt::format("\n{} problem(s) with no passed row, left untuned: {}\n",
                       s.failed_problems.size(), fmt::join(s.failed_problems, ", "));
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
