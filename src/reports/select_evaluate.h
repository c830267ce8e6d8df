// `mha-tune select TRAIN... --evaluate TEST...`: the defaults fitted on the first reports priced on
// every problem of the second, by the times measured there: the chosen point, its time, the best
// time and their ratio, with geomean and worst by kind and by batch.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "defaults/defaults_table.h"
#include "reports/report_json.h"
#include "reports/select.h"

namespace mha {

struct EvaluatedProblem {
  std::string problem;
  std::vector<std::string>
      kinds;  // cache kind (contig, paged), then ragged, fp8, window, cap, sink
  int batch = 0;
  int keys = 0;
  std::string source;  // choose_default's: bucket, model or table; "" when nothing was chosen
  std::string kernel;
  std::string split;           // what was chosen
  std::string measured_split;  // what was timed in its place (a count snapped within the report)
  double predicted_us = 0;     // the model's prediction (source model)
  std::string runner_up;       // the model's second choice
  double measured_us = 0;      // 0: the chosen tile was not measured on this problem (uncovered)
  double best_us = 0;
  std::string best_kernel, best_split;
  double cost = 0;              // measured_us / best_us (0: uncovered)
  double table_cost = 0;        // the same for the table's lookup (nearest bucket and the rule)
  std::string shipped_split;    // what the run-time defaults table answers (its nearest grid point)
  double shipped_cost = 0;      // its measured time / best_us (0: not measured here)
  bool is_in_training = false;  // a training report measured this problem: not held out
};

struct EvaluationGroup {
  std::string group;  // "all", a kind, or "batch=<n>"
  int problems = 0;   // held out and priced
  int uncovered = 0;
  double geomean_cost = 0, worst_cost = 0;
  double table_geomean_cost = 0, table_worst_cost = 0;
  int shipped_problems = 0;  // priced by the run-time defaults table
  double shipped_geomean_cost = 0, shipped_worst_cost = 0;
};

struct Evaluation {
  std::vector<std::string> test_sources;
  std::vector<EvaluatedProblem> problems;
  EvaluationGroup overall;
  std::vector<EvaluationGroup> by_kind, by_batch;
  std::vector<std::string> failed_problems;  // of the test reports: every row failed
  int in_training = 0;  // problems also in a training report, left out of the figures
};

// Throws UsageError when the test reports hold no passed row or come from another GPU model.
// `shipped` (optional): the run-time table (select_decisions.h) priced beside the defaults.
Evaluation evaluate_selection(const Selection& s, const std::vector<Report>& test,
                              const std::vector<std::string>& test_sources,
                              const std::vector<std::string>& training_problems,
                              const DefaultsTable* shipped = nullptr);

nlohmann::json evaluation_to_json(const Evaluation& e);
std::string evaluation_summary(const Evaluation& e);

}  // namespace mha
