// Sweep reports read as select sees them: per problem, the time of every (tile, split) measured,
// the best of them, and the problems whose every row failed. Shared by the bucket choice, the time
// model's fit and the held-out evaluation.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "reports/report_json.h"
#include "reports/select.h"
#include "reports/time_model.h"

namespace mha {

struct MeasuredProblem {
  ProblemShape shape;
  BucketKey bucket;
  double best_us = std::numeric_limits<double>::infinity();
  std::string best_kernel;
  int best_partitions = 0;
  std::map<std::string, std::map<int, double>> times;          // tile id -> partitions -> median us
  std::map<std::string, std::map<int, double>> plan_times;     // tile id -> split plan code -> us
  std::map<std::string, std::map<int, double>> cluster_times;  // tile id -> cluster split -> us
  std::map<std::string, const ResultRow*> tile_rows;           // tile id -> a row (kernel, traits)
};

using Dataset = std::map<std::string, MeasuredProblem>;  // by problem name
using Subset = std::vector<const MeasuredProblem*>;

struct MeasuredReports {
  Dataset problems;
  std::vector<ProblemShape> failed;  // problems whose every row failed: nothing to choose from
  int max_partitions = 1;            // the largest fixed count measured
  double peak_read_gbps = 0;         // the largest the reports measured
};

// Passed rows with a finite positive time; the later report's row wins for a point measured twice.
// The result points into the reports' rows: they must outlive it. `role` names the reports in
// messages ("select", "--evaluate"). Throws UsageError when no passed row is left.
MeasuredReports measure_reports(const std::vector<Report>& reports,
                                const std::vector<std::string>& sources, const std::string& role);

// Time of `tile` on `q` at the measured partition count nearest p (in octaves, ties to the
// smaller); negative when the tile was not measured on q. A split plan and a cluster split are
// looked up exactly. `timed` (optional) receives the split whose time it is.
double time_near(const MeasuredProblem& q, const std::string& tile, int p, int* timed = nullptr);

// What a choice costs on q: its time_near over the best time measured; negative when its tile was
// not measured there (or nothing was chosen).
double choice_cost(const MeasuredProblem& q, const DefaultChoice& c);

// The model's candidates narrowed to the (tile, split) points measured on `q`: an evaluation
// prices a choice by its measured time, so it chooses among what was measured (by the model's
// predictions alone, never by the measured times).
SplitFilter measured_on(const MeasuredProblem& q);

// The time model's samples: every fixed and cluster split measured on `problems`.
std::vector<TimeSample> model_samples(const Subset& problems);

}  // namespace mha
