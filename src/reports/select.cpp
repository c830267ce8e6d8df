// Default selection per shape bucket, the partition-rule fit, their cost, and the JSON / C++
// header outputs. The lookup here and the generated header's select_config follow one algorithm.
#include "select.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "errors.h"
#include "journal.h"
#include "measured_problems.h"
#include "select_evaluate.h"
#include "suggest.h"
#include "split_plan.h"
#include "split_rules.h"

namespace mha {

using nlohmann::json;

namespace {

// The grid the rule is fitted on: alpha in blocks per SM, and the keys one partition must hold.
constexpr double kAlphaGrid[] = {0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0};
constexpr int kMinKeysGrid[] = {32, 64, 128, 256, 512, 1024, 2048, 4096};

int ilog2(int x) {
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

struct RuleFit {
  PartitionRule rule;
  double geomean = 0, worst = 0;
};

const BucketChoice* exact_bucket(const std::vector<BucketChoice>& buckets, const BucketKey& k) {
  auto it =
      std::lower_bound(buckets.begin(), buckets.end(), k,
                       [](const BucketChoice& c, const BucketKey& key) { return c.key < key; });
  return it != buckets.end() && it->key == k ? &*it : nullptr;
}

// Geometric-mean and worst cost of `rule` over `problems`, each with its bucket's tile.
RuleFit rule_cost(const PartitionRule& rule, const Subset& problems,
                  const std::vector<BucketChoice>& buckets, int sm_count) {
  double log_sum = 0, worst = 0;
  int n = 0;
  for (const MeasuredProblem* q : problems) {
    const BucketChoice* b = exact_bucket(buckets, q->bucket);
    if (!b) continue;
    const int p = auto_partitions(rule, sm_count,
                                  rule_work_units(q->bucket.work_units, q->bucket.group, b->traits.bm),
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

Selection build(const Subset& problems, int sm_count, int max_partitions, double peak_gbps,
                bool corrects_residuals) {
  Selection s;
  s.sm_count = sm_count;
  s.buckets = choose_buckets(problems);
  s.model = fit_time_model(model_samples(problems), sm_count, peak_gbps);
  s.model.corrects_residuals = corrects_residuals;
  const RuleFit fit = fit_rule(problems, s.buckets, sm_count, max_partitions);
  s.rule = fit.rule;
  s.rule_geomean_cost = fit.geomean;
  s.rule_worst_cost = fit.worst;
  return s;
}

// Cost of what lookup_config answers for q under selection s; negative when not measured.
double lookup_cost(const Selection& s, const MeasuredProblem& q) {
  const ProblemShape& p = q.shape;
  const ConfigLookup l = lookup_config(s, dtype_key(p.dtype, p.kv_dtype, p.soft_cap > 0), p.depth, q.bucket.group, p.kv, p.mask,
                                       q.bucket.work_units, p.keys, s.sm_count, q.bucket.ragged);
  if (!l.bucket) return -1;
  const double t = time_near(q, tile_id(l.bucket->traits), l.partitions);
  return t < 0 ? -1 : t / q.best_us;
}

// Cost of what choose_default answers for q under selection s; negative when not measured.
double default_cost(const Selection& s, const MeasuredProblem& q) {
  const DefaultChoice c = choose_default(s, q.shape, measured_on(q));
  if (c.source.empty()) return -1;
  const double t = time_near(q, tile_id(c.traits), c.partitions);
  return t < 0 ? -1 : t / q.best_us;
}

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

std::vector<SplitRuleCost> split_rule_costs(const Selection& s, const Subset& problems) {
  std::vector<SplitRuleCost> out;
  for (const SplitRule& rule : split_rules()) {
    out.push_back(price_split(rule.name, s, problems, [&](const MeasuredProblem& q, const BucketChoice& b) {
      SplitRuleInput in;
      in.shape = q.shape;
      in.sm_count = s.sm_count;
      in.tile = b.traits;
      in.fitted = s.rule;
      const int wanted = rule.partitions(in);
      const auto it = q.times.find(tile_id(b.traits));
      return std::make_pair(wanted, it == q.times.end() ? SnappedTime{} : snap_partitions(it->second, wanted));
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

// Raggedness weighs most: whether one split fits the whole batch decides more than the cache kind.
// A different cache kind weighs most: a tile that suits contiguous caches can be 1.2-1.5x slower
// on paged ones (docs/performance.md, run 21). Raggedness decides the split more than the tile,
// and a ragged batch takes its plan from a ragged bucket (lookup_config).
int bucket_distance(const BucketKey& a, const BucketKey& b) {
  return 16 * (a.kv != b.kv) + 8 * (a.ragged != b.ragged) + 4 * (a.mask != b.mask) +
         2 * std::abs(ilog2(a.group) - ilog2(b.group)) +
         std::abs(ilog2(a.work_units) - ilog2(b.work_units)) +
         std::abs(a.length_log2 - b.length_log2);
}

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

PartitionRule default_partition_rule() { return PartitionRule{}; }  // select.h's defaults

PartitionRule read_partition_rule(const std::string& path) {
  const json j = read_json_file(path, "the defaults file");
  if (!j.contains("partition_rule") || !j["partition_rule"].is_object())
    throw UsageError(fmt::format("{}: partition_rule: missing (not a `mha-tune select` output?)", path));
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
    throw UsageError(fmt::format("{}: partition_rule: alpha, min_keys_per_partition and max_partitions must be positive", path));
  return rule;
}

int auto_partitions(const PartitionRule& rule, int sm_count, int work_units, int keys) {
  if (sm_count <= 0 || work_units <= 0) return 1;
  // The generated header repeats this arithmetic exactly (no <cmath> there).
  const double target = rule.alpha * sm_count / work_units;
  int p = static_cast<int>(target);
  if (p < target) ++p;
  const int by_keys = rule.min_keys_per_partition > 0 ? keys / rule.min_keys_per_partition : p;
  p = std::min(p, std::max(by_keys, 1));
  return std::max(1, std::min(p, std::max(rule.max_partitions, 1)));
}

int length_log2(int keys) { return ilog2(keys); }

bool BucketKey::operator<(const BucketKey& o) const {
  return std::tie(dtype, depth, group, kv, mask, work_units, length_log2, ragged) <
         std::tie(o.dtype, o.depth, o.group, o.kv, o.mask, o.work_units, o.length_log2, o.ragged);
}

bool BucketKey::operator==(const BucketKey& o) const { return !(*this < o) && !(o < *this); }

BucketKey bucket_of(const ProblemShape& p) {
  BucketKey b;
  b.dtype = dtype_key(p.dtype, p.kv_dtype, p.soft_cap > 0);
  b.depth = p.depth;
  b.group = p.kv_heads > 0 ? p.heads / p.kv_heads : p.heads;
  b.kv = p.kv;
  b.mask = p.mask;
  b.work_units = p.batch * p.kv_heads;
  b.length_log2 = length_log2(p.keys);
  b.ragged = is_ragged_batch(p);
  return b;
}

bool is_ragged_batch(const ProblemShape& p) {
  if (p.ragged_lengths.empty()) return !p.lengths.empty();  // an older report: named ragged
  const auto [lo, hi] = std::minmax_element(p.ragged_lengths.begin(), p.ragged_lengths.end());
  return *lo != *hi;
}

std::string bucket_name(const BucketKey& b) {
  return fmt::format("{}_d{}_g{}_{}_{}_wu{}_n2^{}{}", b.dtype, b.depth, b.group, b.kv, b.mask,
                     b.work_units, b.length_log2, b.ragged ? "_ragged" : "");
}

ConfigLookup lookup_config(const Selection& s, const std::string& dtype, int depth, int group,
                           const std::string& kv, const std::string& mask, int batch_kv_heads,
                           int keys, int sm_count, bool ragged) {
  BucketKey want{dtype, depth, group, kv, mask, batch_kv_heads, length_log2(keys), ragged};
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
  // sequence (run 20's ragged suite), hence a ragged bucket's plan of the same kv.
  if (l.is_exact && sm_count == s.sm_count)
    l.partitions = l.bucket->partitions;
  else if (ragged && ragged_plan != 0)
    l.partitions = ragged_plan;
  else if (is_split_plan(l.bucket->partitions))
    l.partitions = l.bucket->partitions;
  else
    l.partitions = auto_partitions(s.rule, sm_count,
                                   rule_work_units(batch_kv_heads, group, l.bucket->traits.bm), keys);
  return l;
}

DefaultChoice choose_default(const Selection& s, const ProblemShape& shape,
                             const SplitFilter& allowed) {
  DefaultChoice c;
  const BucketKey key = bucket_of(shape);
  const bool ragged = key.ragged;
  const BucketChoice* exact = exact_bucket(s.buckets, key);
  if (exact) {
    c.source = "bucket";
    c.kernel = exact->kernel;
    c.traits = exact->traits;
    c.partitions = exact->partitions;
    return c;
  }
  if (!ragged) {
    const ModelChoice m = choose_by_model(s.model, shape, allowed);
    if (m.tile) {
      c.source = "model";
      c.kernel = m.tile->kernel;
      c.traits = m.tile->traits;
      c.partitions = m.partitions;
      c.predicted_us = m.predicted_us;
      c.runner_up = m.runner_up;
      c.runner_up_us = m.runner_up_us;
      return c;
    }
  }
  return table_choice(s, shape);
}

DefaultChoice table_choice(const Selection& s, const ProblemShape& shape) {
  DefaultChoice c;
  const BucketKey key = bucket_of(shape);
  const ConfigLookup l = lookup_config(s, key.dtype, shape.depth, key.group, shape.kv, shape.mask,
                                       key.work_units, shape.keys, s.sm_count, key.ragged);
  if (!l.bucket) return c;
  c.source = "table";
  c.kernel = l.bucket->kernel;
  c.traits = l.bucket->traits;
  c.partitions = l.partitions;
  return c;
}

Selection select_defaults(const std::vector<Report>& reports,
                          const std::vector<std::string>& sources, bool corrects_residuals) {
  if (reports.empty()) throw UsageError("select: no report given");
  auto source = [&](size_t i) {
    return i < sources.size() ? sources[i] : fmt::format("report {}", i);
  };
  for (size_t i = 1; i < reports.size(); ++i) {
    if (reports[i].meta.gpu_name != reports[0].meta.gpu_name ||
        reports[i].meta.sm_count != reports[0].meta.sm_count) {
      throw UsageError(fmt::format(
          "{}: metadata.gpu_name: '{}' ({} SMs) differs from '{}' ({} SMs) in {}; defaults are "
          "selected per GPU, run select once per GPU",
          source(i), reports[i].meta.gpu_name, reports[i].meta.sm_count, reports[0].meta.gpu_name,
          reports[0].meta.sm_count, source(0)));
    }
  }
  // Only kernel sweeps have tiles to select: a peers report (scripts/peers.py: "peer_*" rows,
  // every tile parameter 0) would otherwise become a header naming tile bm0_bn0.
  for (size_t i = 0; i < reports.size(); ++i) {
    for (size_t j = 0; j < reports[i].rows.size(); ++j) {
      const ResultRow& row = reports[i].rows[j];
      const KernelTraits& t = row.traits;
      if (std::min({t.bm, t.bn, t.bk, t.wm, t.wn, t.threads, t.stages}) < 1) {
        throw UsageError(fmt::format(
            "{}: rows[{}].traits: kernel '{}' has no tile (bm {}, bn {}, threads {}): not a "
            "`mha-tune sweep` report (a peers report, from scripts/peers.py?); select picks tiles "
            "from kernel sweeps only",
            source(i), j, row.kernel, t.bm, t.bn, t.threads));
      }
    }
  }
  const MeasuredReports measured = measure_reports(reports, sources, "select");
  const Dataset& data = measured.problems;
  const int max_partitions = measured.max_partitions;
  const double peak_gbps = measured.peak_read_gbps;

  const int sm_count = reports[0].meta.sm_count;
  Subset all;
  for (const auto& entry : data) all.push_back(&entry.second);
  Selection s = build(all, sm_count, max_partitions, peak_gbps, corrects_residuals);
  s.failed_problems = measured.failed_problems;
  s.gpu_name = reports[0].meta.gpu_name;
  s.sources = sources;

  double log_sum = 0;
  int n = 0;
  for (const MeasuredProblem* q : all) {
    ProblemCost c;
    c.problem = q->shape.name;
    c.keys = q->shape.keys;
    c.best_us = q->best_us;
    c.best_kernel = q->best_kernel;
    c.best_partitions = q->best_partitions;
    const double cost = lookup_cost(s, *q);
    c.cost = cost < 0 ? 0 : cost;
    const BucketChoice* b = exact_bucket(s.buckets, q->bucket);
    const double rule_t =
        time_near(*q, tile_id(b->traits),
                  auto_partitions(s.rule, sm_count,
                                  rule_work_units(q->bucket.work_units, q->bucket.group, b->traits.bm),
                                  q->shape.keys));
    c.rule_cost = rule_t < 0 ? 0 : rule_t / q->best_us;
    const ModelChoice m = choose_by_model(s.model, q->shape, measured_on(*q));
    const double model_t = m.tile ? time_near(*q, m.tile->tile, m.partitions) : -1;
    c.model_cost = model_t < 0 ? 0 : model_t / q->best_us;
    if (cost > 0) {
      log_sum += std::log(cost);
      s.worst_cost = std::max(s.worst_cost, cost);
      ++n;
    }
    s.problems.push_back(c);
  }
  s.geomean_cost = n ? std::exp(log_sum / n) : 0;

  // Refit on `train`, evaluate on `test` what the refit's table lookup answers and what its
  // defaults (choose_default: the model where no bucket was measured) answer.
  auto held_out = [&](const Subset& train, const Subset& test) {
    const Selection held = build(train, sm_count, max_partitions, peak_gbps, corrects_residuals);
    HoldoutCost h;
    h.problems = static_cast<int>(test.size());
    double table_log_sum = 0, model_log_sum = 0;
    int table_n = 0, model_n = 0;
    for (const MeasuredProblem* q : test) {
      const double cost = lookup_cost(held, *q);
      if (cost < 0) {
        ++h.uncovered;
      } else {
        table_log_sum += std::log(cost);
        h.worst_cost = std::max(h.worst_cost, cost);
        ++table_n;
      }
      const double model = default_cost(held, *q);
      if (model < 0) {
        ++h.model_uncovered;
      } else {
        model_log_sum += std::log(model);
        h.model_worst_cost = std::max(h.model_worst_cost, model);
        ++model_n;
      }
    }
    h.geomean_cost = table_n ? std::exp(table_log_sum / table_n) : 0;
    h.model_geomean_cost = model_n ? std::exp(model_log_sum / model_n) : 0;
    return h;
  };
  // One holdout per distinct value of `key_of` (when there are two or more).
  auto hold_each = [&](auto key_of, const char* name) {
    std::map<std::string, Subset> by_value;
    for (const MeasuredProblem* q : all) by_value[key_of(*q)].push_back(q);
    std::vector<HoldoutCost> out;
    if (by_value.size() < 2) return out;
    for (const auto& [value, test] : by_value) {
      Subset train;
      for (const MeasuredProblem* q : all)
        if (key_of(*q) != value) train.push_back(q);
      HoldoutCost h = held_out(train, test);
      h.held_out = fmt::format("{}={}", name, value);
      out.push_back(h);
    }
    return out;
  };
  s.batch_holdout = hold_each(
      [](const MeasuredProblem& q) { return std::to_string(q.shape.batch); }, "batch");
  s.family_holdout = hold_each([](const MeasuredProblem& q) { return model_family(q.shape); }, "family");
  std::set<int> lengths;
  for (const MeasuredProblem* q : all) lengths.insert(q->shape.keys);
  if (lengths.size() >= 2) {
    for (int keys : lengths) {
      Subset train, test;
      for (const MeasuredProblem* q : all) (q->shape.keys == keys ? test : train).push_back(q);
      HoldoutCost h = held_out(train, test);
      h.keys = keys;
      h.held_out = fmt::format("keys={}", keys);
      s.holdout.push_back(h);
    }
  }
  // Ragged batches in two halves of their length mixes (alternately, mixes in the order of their
  // first problem's name): refit without one half (the uniform problems stay in), evaluate on
  // it, then the other way round. A mix is one list of lengths: its contiguous and paged
  // problems fall in the same half, so each half holds both cache kinds (alternating problems
  // by name put every contiguous batch in one half and every paged one in the other).
  Subset ragged;
  for (const MeasuredProblem* q : all)
    if (!q->shape.lengths.empty()) ragged.push_back(q);
  // A mix's key: its lengths (an older report without them: the problem's name).
  auto mix_key = [](const MeasuredProblem* q) {
    return q->shape.ragged_lengths.empty() ? q->shape.name
                                           : fmt::format("{}", fmt::join(q->shape.ragged_lengths, ","));
  };
  std::map<std::string, int> mix_index;  // mix -> order of first appearance
  for (const MeasuredProblem* q : ragged) mix_index.emplace(mix_key(q), static_cast<int>(mix_index.size()));
  if (ragged.size() >= 4 && mix_index.size() >= 2) {
    for (int half = 0; half < 2; ++half) {
      Subset train, test;
      for (const MeasuredProblem* q : all)
        if (q->shape.lengths.empty()) train.push_back(q);
      for (const MeasuredProblem* q : ragged)
        (mix_index.at(mix_key(q)) % 2 == half ? test : train).push_back(q);
      HoldoutCost h = held_out(train, test);
      h.half = half;
      h.held_out = fmt::format("half={}", half);
      s.ragged_holdout.push_back(h);
    }
  }
  s.split_rules = split_rule_costs(s, all);
  return s;
}

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
        b.key.work_units, b.key.length_log2, b.key.ragged ? "true" : "false", t.bm, t.bn, t.bk, t.wm, t.wn, t.threads, t.stages,
        t.warp_split_k ? "true" : "false",
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
                       tile_id(b.traits), split_label(b.partitions), b.problems, b.covered, b.geomean_cost,
                       b.worst_cost);
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
      const int table_priced = h.problems - h.uncovered, model_priced = h.problems - h.model_uncovered;
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
                "every uniform problem)" + how);
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

namespace {

// `--suggest`: the next points, from what the reports measured (none: seeds only).
void write_suggestion(const Selection* s, const std::vector<Report>& reports,
                      const std::vector<std::string>& report_paths, const SelectExtras& extras) {
  const std::vector<CandidatePoint> candidates = read_candidates(extras.candidates_path);
  MeasuredReports measured;
  if (!reports.empty()) measured = measure_reports(reports, report_paths, "select --suggest");
  const TimeModel model = s ? s->model : TimeModel{};
  const std::vector<CandidatePoint> next = suggest_points(candidates, measured, model, extras.suggest);
  size_t done = 0;
  for (const auto& [name, q] : measured.problems)
    for (const auto* table : {&q.times, &q.plan_times, &q.cluster_times})
      for (const auto& [tile, by_p] : *table) done += by_p.size();
  write_text_file_atomic(extras.out_points, suggestion_json(next, static_cast<int>(candidates.size()),
                                                            static_cast<int>(done)));
  std::printf("\nSuggested %zu of %zu candidate point(s) (%zu measured) -> %s\n", next.size(),
              candidates.size(), done, extras.out_points.c_str());
}

}  // namespace

int run_select(const std::vector<std::string>& report_paths, const std::string& out_json,
               const std::string& out_header, const SelectExtras& extras) {
  const std::vector<std::string>& evaluate_paths = extras.evaluate_paths;
  const std::string& evaluation_json = extras.evaluation_json;
  std::vector<Report> reports;
  for (const std::string& path : report_paths) reports.push_back(read_report_json(path));
  if (reports.empty()) {  // seeds for a sweep that has measured nothing yet
    if (extras.suggest <= 0) throw UsageError("select: no report given");
    write_suggestion(nullptr, reports, report_paths, extras);
    return kExitOk;
  }
  const Selection s = select_defaults(reports, report_paths, extras.corrects_residuals);
  const std::string summary = selection_summary(s);
  std::fputs(summary.c_str(), stdout);
  std::fflush(stdout);
  if (!out_json.empty()) write_text_file_atomic(out_json, selection_to_json(s).dump(2) + "\n");
  if (!out_header.empty()) {
    const std::string text = selection_header(s);
    std::ifstream existing(out_header, std::ios::binary);
    std::stringstream old;
    if (existing) old << existing.rdbuf();
    if (!existing || old.str() != text) write_text_file_atomic(out_header, text);
  }
  if (extras.suggest > 0) write_suggestion(&s, reports, report_paths, extras);
  if (evaluate_paths.empty()) return kExitOk;
  std::vector<Report> test;
  for (const std::string& path : evaluate_paths) test.push_back(read_report_json(path));
  std::vector<std::string> trained;
  if (!extras.prices_training_problems)
    for (const ProblemCost& c : s.problems) trained.push_back(c.problem);
  const Evaluation e = evaluate_selection(s, test, evaluate_paths, trained);
  std::fputs(evaluation_summary(e).c_str(), stdout);
  std::fflush(stdout);
  if (!evaluation_json.empty())
    write_text_file_atomic(evaluation_json, evaluation_to_json(e).dump(2) + "\n");
  if (e.overall.problems == 0) {  // nothing passes on nothing
    std::fprintf(stderr,
                 "select --evaluate: no held-out problem could be priced (%d in training, %d "
                 "uncovered); nothing was evaluated\n",
                 e.in_training, e.overall.uncovered);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace mha
