// Held-out evaluation of select's defaults: each test problem's chosen point priced by the times
// the test reports measured, grouped by kind and by batch.
#include "reports/select_evaluate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "api/split_plan.h"
#include "common/errors.h"
#include "common/kinds.h"
#include "reports/measured_problems.h"
#include "reports/select_decisions.h"

namespace mha {

namespace {

std::vector<std::string> kinds_of(const ProblemShape& p) {
  std::vector<std::string> kinds{is_paged(p.kv) ? "paged" : "contig"};
  if (is_ragged_batch(p)) kinds.push_back("ragged");
  if (is_fp8(p.kv_dtype)) kinds.push_back("fp8");
  if (p.mask == "window" || p.mask == "chunked") kinds.push_back("window");
  if (p.soft_cap > 0) kinds.push_back("cap");
  if (p.has_sink) kinds.push_back("sink");
  return kinds;
}

// The measured time of `tile` at `partitions` on q (0 when the tile was not measured there), and
// the split that was timed in its place.
double priced(const MeasuredProblem& q, const std::string& tile, int partitions,
              std::string* measured_split) {
  int timed = partitions;
  const double t = time_near(q, tile, partitions, &timed);
  if (t <= 0) return 0;
  if (measured_split) *measured_split = split_label(timed);
  return t;
}

struct Accumulator {
  int problems = 0, uncovered = 0, table_n = 0, shipped_n = 0;
  double log_sum = 0, worst = 0, table_log_sum = 0, table_worst = 0;
  double shipped_log_sum = 0, shipped_worst = 0;
  void add(const EvaluatedProblem& e) {
    if (e.cost > 0) {
      ++problems;
      log_sum += std::log(e.cost);
      worst = std::max(worst, e.cost);
    } else {
      ++uncovered;
    }
    if (e.shipped_cost > 0) {
      ++shipped_n;
      shipped_log_sum += std::log(e.shipped_cost);
      shipped_worst = std::max(shipped_worst, e.shipped_cost);
    }
    if (e.table_cost > 0) {
      ++table_n;
      table_log_sum += std::log(e.table_cost);
      table_worst = std::max(table_worst, e.table_cost);
    }
  }
  EvaluationGroup group(const std::string& name) const {
    EvaluationGroup g;
    g.group = name;
    g.problems = problems;
    g.uncovered = uncovered;
    g.geomean_cost = problems ? std::exp(log_sum / problems) : 0;
    g.worst_cost = worst;
    g.table_geomean_cost = table_n ? std::exp(table_log_sum / table_n) : 0;
    g.table_worst_cost = table_worst;
    g.shipped_problems = shipped_n;
    g.shipped_geomean_cost = shipped_n ? std::exp(shipped_log_sum / shipped_n) : 0;
    g.shipped_worst_cost = shipped_worst;
    return g;
  }
};

nlohmann::json group_json(const EvaluationGroup& g) {
  return {{"group", g.group},
          {"problems", g.problems},
          {"uncovered", g.uncovered},
          {"geomean_cost", g.geomean_cost},
          {"worst_cost", g.worst_cost},
          {"table_geomean_cost", g.table_geomean_cost},
          {"table_worst_cost", g.table_worst_cost},
          {"shipped_problems", g.shipped_problems},
          {"shipped_geomean_cost", g.shipped_geomean_cost},
          {"shipped_worst_cost", g.shipped_worst_cost}};
}

}  // namespace

Evaluation evaluate_selection(const Selection& s, const std::vector<Report>& test,
                              const std::vector<std::string>& test_sources,
                              const std::vector<std::string>& training_problems,
                              const DefaultsTable* shipped) {
  for (size_t i = 0; i < test.size(); ++i) {
    if (test[i].meta.gpu_name != s.gpu_name || test[i].meta.sm_count != s.sm_count)
      throw UsageError(fmt::format(
          "--evaluate {}: metadata.gpu_name: '{}' ({} SMs), but the defaults were fitted on '{}' "
          "({} SMs); evaluate on reports of the same GPU model",
          i < test_sources.size() ? test_sources[i] : std::to_string(i), test[i].meta.gpu_name,
          test[i].meta.sm_count, s.gpu_name, s.sm_count));
  }
  const MeasuredReports measured = measure_reports(test, test_sources, "--evaluate");
  const std::set<std::string> trained(training_problems.begin(), training_problems.end());
  Evaluation e;
  e.test_sources = test_sources;
  for (const ProblemShape& shape : measured.failed) e.failed_problems.push_back(shape.name);
  Accumulator all;
  std::map<std::string, Accumulator> by_kind;
  std::map<int, Accumulator> by_batch;
  for (const auto& [name, q] : measured.problems) {
    EvaluatedProblem p;
    p.problem = name;
    p.kinds = kinds_of(q.shape);
    p.batch = q.shape.batch;
    p.keys = q.shape.keys;
    p.best_us = q.best_us;
    p.best_kernel = q.best_kernel;
    p.best_split = split_label(q.best_partitions);
    p.is_in_training = trained.count(name) > 0;
    const DefaultChoice chosen = choose_default(s, q.shape, measured_on(q));
    p.source = chosen.source;
    p.kernel = chosen.kernel;
    p.split = chosen.source.empty() ? "" : split_label(chosen.partitions);
    p.predicted_us = chosen.predicted_us;
    p.runner_up = chosen.runner_up;
    p.measured_us = chosen.source.empty()
                        ? 0
                        : priced(q, tile_id(chosen.traits), chosen.partitions, &p.measured_split);
    p.cost = p.measured_us > 0 ? p.measured_us / q.best_us : 0;
    const DefaultChoice table = table_choice(s, q.shape);
    const double table_us =
        table.source.empty() ? 0 : priced(q, tile_id(table.traits), table.partitions, nullptr);
    p.table_cost = table_us > 0 ? table_us / q.best_us : 0;
    if (shipped) {
      // As the library chooses: unless the nearest entry is the shape's own measured bucket, the
      // table's model on the shape itself among the tiles the test's build has (those the test
      // measured); else the entry's tile, else its first alternative the build has.
      const DefaultsQuery query = defaults_query(q.shape);
      const DefaultsEntry* entry = lookup_defaults(*shipped, query);
      auto in_build = [&](const TileModel& t, int) { return q.tile_rows.count(t.tile) > 0; };
      const ModelChoice by_model = table_model_choice(*shipped, entry, query, q.shape, in_build);
      if (by_model.tile) {
        p.shipped_split = split_label(by_model.partitions) + " (model)";
        const double us = priced(q, by_model.tile->tile, by_model.partitions, nullptr);
        p.shipped_cost = us > 0 ? us / q.best_us : 0;
      } else if (entry) {
        const std::vector<DefaultsAlternative> choices = choices_of(*entry);
        for (size_t i = 0; i < choices.size(); ++i) {
          const std::string tile = tile_of_kernel_name(choices[i].kernel);
          if (q.tile_rows.count(tile) == 0) continue;
          p.shipped_split = split_label(choices[i].partitions) +
                            (i > 0 ? " (choice " + std::to_string(i + 1) + ")" : "");
          const double us = priced(q, tile, choices[i].partitions, nullptr);
          p.shipped_cost = us > 0 ? us / q.best_us : 0;
          break;
        }
      }
    }
    if (p.is_in_training) {
      ++e.in_training;
    } else {
      all.add(p);
      for (const std::string& kind : p.kinds) by_kind[kind].add(p);
      by_batch[p.batch].add(p);
    }
    e.problems.push_back(std::move(p));
  }
  e.overall = all.group("all");
  for (const auto& [kind, acc] : by_kind) e.by_kind.push_back(acc.group(kind));
  for (const auto& [batch, acc] : by_batch)
    e.by_batch.push_back(acc.group(fmt::format("batch={}", batch)));
  return e;
}

nlohmann::json evaluation_to_json(const Evaluation& e) {
  nlohmann::json problems = nlohmann::json::array();
  for (const EvaluatedProblem& p : e.problems) {
    problems.push_back({{"problem", p.problem},
                        {"kinds", p.kinds},
                        {"batch", p.batch},
                        {"keys", p.keys},
                        {"source", p.source},
                        {"kernel", p.kernel},
                        {"split", p.split},
                        {"measured_split", p.measured_split},
                        {"predicted_us", p.predicted_us},
                        {"runner_up", p.runner_up},
                        {"measured_us", p.measured_us},
                        {"best_us", p.best_us},
                        {"best_kernel", p.best_kernel},
                        {"best_split", p.best_split},
                        {"cost", p.cost},
                        {"table_cost", p.table_cost},
                        {"shipped_split", p.shipped_split},
                        {"shipped_cost", p.shipped_cost},
                        {"in_training", p.is_in_training}});
  }
  nlohmann::json kinds = nlohmann::json::array(), batches = nlohmann::json::array();
  for (const EvaluationGroup& g : e.by_kind) kinds.push_back(group_json(g));
  for (const EvaluationGroup& g : e.by_batch) batches.push_back(group_json(g));
  return {{"schema_version", 1},
          {"definition",
           "cost = measured time of the chosen point / best time measured for the problem, both "
           "from the test reports; the defaults (choose_default) and the table's lookup alone "
           "(table_cost), fitted on the training reports only; a model choice is made among the "
           "points the test measured, by predicted time; cost 0: the chosen tile was not measured"},
          {"test_sources", e.test_sources},
          {"overall", group_json(e.overall)},
          {"by_kind", kinds},
          {"by_batch", batches},
          {"in_training", e.in_training},
          {"failed_problems", e.failed_problems},
          {"problems", problems}};
}

std::string evaluation_summary(const Evaluation& e) {
  std::string out = fmt::format("\nHeld-out evaluation on {} ({} problem(s)):\n\n",
                                fmt::join(e.test_sources, ", "), e.problems.size());
  out +=
      "| problem | source | chosen | split | predicted us | measured us | best us | best | cost | "
      "table cost |\n|---|---|---|---|---:|---:|---:|---|---:|---:|\n";
  for (const EvaluatedProblem& p : e.problems) {
    const std::string split = p.measured_split.empty() || p.measured_split == p.split
                                  ? p.split
                                  : p.split + " (" + p.measured_split + " timed)";
    out += fmt::format("| {}{} | {} | {} | {} | {} | {:.2f} | {:.2f} | {} {} | {} | {} |\n",
                       p.problem, p.is_in_training ? " (in training)" : "",
                       p.source.empty() ? "none" : p.source, p.kernel, split,
                       p.predicted_us > 0 ? fmt::format("{:.2f}", p.predicted_us) : "",
                       p.measured_us, p.best_us, p.best_kernel, p.best_split,
                       p.cost > 0 ? fmt::format("{:.3f}", p.cost) : "uncovered",
                       p.table_cost > 0 ? fmt::format("{:.3f}", p.table_cost) : "uncovered");
  }
  out +=
      "\n| group | problems | uncovered | geomean | worst | table geomean | table worst | shipped "
      "geomean | shipped worst | shipped priced |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  auto row = [&out](const EvaluationGroup& g) {
    out += fmt::format(
        "| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} |\n", g.group,
        g.problems, g.uncovered, g.geomean_cost, g.worst_cost, g.table_geomean_cost,
        g.table_worst_cost, g.shipped_geomean_cost, g.shipped_worst_cost, g.shipped_problems);
  };
  row(e.overall);
  for (const EvaluationGroup& g : e.by_kind) row(g);
  for (const EvaluationGroup& g : e.by_batch) row(g);
  if (e.in_training > 0)
    out += fmt::format(
        "\n{} problem(s) also in the training reports: not held out, left out of the figures\n",
        e.in_training);
  if (!e.failed_problems.empty())
    out += fmt::format("\n{} test problem(s) with no passed row: {}\n", e.failed_problems.size(),
                       fmt::join(e.failed_problems, ", "));
  return out;
}

}  // namespace mha
