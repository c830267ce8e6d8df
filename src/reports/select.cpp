// `mha-tune select`: the selection (buckets, rule, time model), its costs in sample and held out,
// the defaults it answers for a shape, and the command (suggestions and evaluation included).
#include "reports/select.h"

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

#include "api/split_plan.h"
#include "common/errors.h"
#include "reports/measured_problems.h"
#include "reports/report_json.h"
#include "reports/select_decisions.h"
#include "reports/select_evaluate.h"
#include "reports/select_internal.h"
#include "reports/suggest.h"

namespace mha {

namespace {

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

// Cost of what the table answers for q under selection s; negative when not measured.
double lookup_cost(const Selection& s, const MeasuredProblem& q) {
  return choice_cost(q, table_choice(s, q.shape));
}

// Cost of what choose_default answers for q under selection s; negative when not measured.
double default_cost(const Selection& s, const MeasuredProblem& q) {
  return choice_cost(q, choose_default(s, q.shape, measured_on(q)));
}

}  // namespace

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
  const ConfigLookup l =
      lookup_config(s, key.dtype, shape.depth, key.group, shape.kv, shape.mask, key.work_units,
                    shape.keys, s.sm_count, key.ragged, key.q_len);
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
  // Only kernel sweeps have tiles to select: a peers report (scripts/peers/peers.py: "peer_*" rows,
  // every tile parameter 0) would otherwise become a header naming tile bm0_bn0.
  for (size_t i = 0; i < reports.size(); ++i) {
    for (size_t j = 0; j < reports[i].rows.size(); ++j) {
      const ResultRow& row = reports[i].rows[j];
      const KernelTraits& t = row.traits;
      if (std::min({t.bm, t.bn, t.bk, t.wm, t.wn, t.threads, t.stages}) < 1) {
        throw UsageError(fmt::format(
            "{}: rows[{}].traits: kernel '{}' has no tile (bm {}, bn {}, threads {}): not a "
            "`mha-tune sweep` report (a peers report, from scripts/peers/peers.py?); select picks "
            "tiles from kernel sweeps only",
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
  for (const ProblemShape& shape : measured.failed) {
    s.failed_problems.push_back(shape.name);
    const BucketKey key = bucket_of(shape);
    const std::string name = bucket_name(key);
    if (!exact_bucket(s.buckets, key) &&
        std::find(s.untuned_buckets.begin(), s.untuned_buckets.end(), name) ==
            s.untuned_buckets.end())
      s.untuned_buckets.push_back(name);
  }
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
    const double rule_t = time_near(
        *q, tile_id(b->traits),
        auto_partitions(
            s.rule, sm_count,
            rule_work_units(q->bucket.work_units, q->bucket.group * q->bucket.q_len, b->traits.bm),
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
  s.batch_holdout =
      hold_each([](const MeasuredProblem& q) { return std::to_string(q.shape.batch); }, "batch");
  s.family_holdout =
      hold_each([](const MeasuredProblem& q) { return model_family(q.shape); }, "family");
  // Query lengths among the multi-token problems (single-token ones stay in every refit).
  {
    Subset several;
    for (const MeasuredProblem* q : all)
      if (q->shape.q_len > 1) several.push_back(q);
    std::map<int, Subset> by_q_len;
    for (const MeasuredProblem* q : several) by_q_len[q->shape.q_len].push_back(q);
    if (by_q_len.size() >= 2) {
      for (const auto& [q_len, test] : by_q_len) {
        Subset train;
        for (const MeasuredProblem* q : all)
          if (q->shape.q_len != q_len) train.push_back(q);
        HoldoutCost h = held_out(train, test);
        h.held_out = fmt::format("q_len={}", q_len);
        s.q_len_holdout.push_back(h);
      }
    }
  }
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
    return q->shape.ragged_lengths.empty()
               ? q->shape.name
               : fmt::format("{}", fmt::join(q->shape.ragged_lengths, ","));
  };
  std::map<std::string, int> mix_index;  // mix -> order of first appearance
  for (const MeasuredProblem* q : ragged)
    mix_index.emplace(mix_key(q), static_cast<int>(mix_index.size()));
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

namespace {

// `--suggest`: the next points, from what the reports measured (none: seeds only).
void write_suggestion(const Selection* s, const std::vector<Report>& reports,
                      const std::vector<std::string>& report_paths, const SelectExtras& extras) {
  const std::vector<CandidatePoint> candidates = read_candidates(extras.candidates_path);
  MeasuredReports measured;
  if (!reports.empty()) measured = measure_reports(reports, report_paths, "select --suggest");
  const TimeModel model = s ? s->model : TimeModel{};
  const std::vector<CandidatePoint> next =
      suggest_points(candidates, measured, model, extras.suggest);
  size_t done = 0;
  for (const auto& [name, q] : measured.problems)
    for (const auto* table : {&q.times, &q.plan_times, &q.cluster_times})
      for (const auto& [tile, by_p] : *table) done += by_p.size();
  write_text_file_atomic(
      extras.out_points,
      suggestion_json(next, static_cast<int>(candidates.size()), static_cast<int>(done)));
  std::printf("\nSuggested %zu of %zu candidate point(s) (%zu measured) -> %s\n", next.size(),
              candidates.size(), done, extras.out_points.c_str());
}

}  // namespace

// Writes `text` to `path` unless the file holds it already (a build embeds the defaults table).
void write_if_changed(const std::string& path, const std::string& text) {
  std::ifstream existing(path, std::ios::binary);
  std::stringstream old;
  if (existing) old << existing.rdbuf();
  if (!existing || old.str() != text) write_text_file_atomic(path, text);
}

int run_select(const std::vector<std::string>& report_paths, const std::string& out_json,
               const SelectExtras& extras) {
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
  if (extras.suggest > 0) write_suggestion(&s, reports, report_paths, extras);
  if (extras.out_defaults.empty() && evaluate_paths.empty()) return kExitOk;
  const DefaultsTable shipped = decisions_of(s);  // a choice per grid point: only when asked for
  if (!extras.out_defaults.empty())
    write_if_changed(extras.out_defaults, defaults_to_json_text(shipped));
  if (evaluate_paths.empty()) return kExitOk;
  std::vector<Report> test;
  for (const std::string& path : evaluate_paths) test.push_back(read_report_json(path));
  std::vector<std::string> trained;
  if (!extras.prices_training_problems)
    for (const ProblemCost& c : s.problems) trained.push_back(c.problem);
  const Evaluation e = evaluate_selection(s, test, evaluate_paths, trained, &shipped);
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
