// Reports to measured problems: the passed points per problem and tile, the best per problem, the
// problems left with nothing passed, and the time model's samples.
#include "reports/measured_problems.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "api/split_plan.h"
#include "common/errors.h"
#include "reports/journal.h"
#include "reports/split_rules.h"

namespace mha {

MeasuredReports measure_reports(const std::vector<Report>& reports,
                                const std::vector<std::string>& sources, const std::string& role) {
  auto source = [&](size_t i) {
    return i < sources.size() ? sources[i] : fmt::format("report {}", i);
  };
  MeasuredReports out;
  std::map<std::string, const ResultRow*> points;
  std::vector<std::string> order;
  std::set<std::string> passed;
  std::map<std::string, ProblemShape> named;
  for (const Report& r : reports) {
    out.peak_read_gbps = std::max(out.peak_read_gbps, r.meta.peak_read_gbps);
    for (const ResultRow& row : r.rows) {
      named.emplace(row.problem.name, row.problem);
      if (row.status != Status::kPassed || !(row.time.median_us > 0) ||
          !std::isfinite(row.time.median_us) || row.partitions == 0) {
        continue;
      }
      passed.insert(row.problem.name);
      const std::string key = point_key(row);
      if (!points.count(key)) order.push_back(key);
      points[key] = &row;
    }
  }
  for (const auto& [name, shape] : named) {
    if (passed.count(name)) continue;
    out.failed.push_back(shape);
  }
  if (points.empty()) {
    std::string names;
    for (size_t i = 0; i < reports.size(); ++i) names += (i ? ", " : "") + source(i);
    throw UsageError(fmt::format("{}: {}: rows: no passed row with a time; nothing to select from",
                                 role, names));
  }
  for (const std::string& key : order) {
    const ResultRow& row = *points[key];
    MeasuredProblem& q = out.problems[row.problem.name];
    if (q.shape.name.empty()) {
      q.shape = row.problem;
      q.bucket = bucket_of(row.problem);
    }
    const std::string tile = tile_id(row.traits);
    auto& by_p = is_split_plan(row.partitions)      ? q.plan_times[tile]
                 : is_cluster_split(row.partitions) ? q.cluster_times[tile]
                                                    : q.times[tile];
    auto it = by_p.find(row.partitions);
    if (it == by_p.end() || row.time.median_us < it->second)
      by_p[row.partitions] = row.time.median_us;
    if (!q.tile_rows.count(tile)) q.tile_rows[tile] = &row;
    if (row.time.median_us < q.best_us) {
      q.best_us = row.time.median_us;
      q.best_kernel = row.kernel;
      q.best_partitions = row.partitions;
    }
    if (!is_split_plan(row.partitions) && !is_cluster_split(row.partitions))
      out.max_partitions = std::max(out.max_partitions, row.partitions);
  }
  // Reports from before the peak was recorded: the fastest stream any row achieved.
  if (!(out.peak_read_gbps > 0))
    for (const auto& [key, row] : points)
      out.peak_read_gbps = std::max(out.peak_read_gbps, row->achieved_gbps);
  return out;
}

double time_near(const MeasuredProblem& q, const std::string& tile, int p, int* timed) {
  if (timed) *timed = p;
  if (is_split_plan(p) || is_cluster_split(p)) {
    const auto& table = is_split_plan(p) ? q.plan_times : q.cluster_times;
    auto by_code = table.find(tile);
    if (by_code == table.end()) return -1;
    auto t = by_code->second.find(p);
    return t == by_code->second.end() ? -1 : t->second;
  }
  auto it = q.times.find(tile);
  if (it == q.times.end() || it->second.empty()) return -1;
  const SnappedTime t = snap_partitions(it->second, p);
  if (timed) *timed = t.partitions;
  return t.time_us;
}

double choice_cost(const MeasuredProblem& q, const DefaultChoice& c) {
  if (c.source.empty()) return -1;
  const double t = time_near(q, tile_id(c.traits), c.partitions);
  return t < 0 ? -1 : t / q.best_us;
}

SplitFilter measured_on(const MeasuredProblem& q) {
  return [&q](const TileModel& t, int split) {
    const auto& table = is_cluster_split(split) ? q.cluster_times : q.times;
    const auto it = table.find(t.tile);
    return it != table.end() && it->second.count(split) > 0;
  };
}

std::vector<TimeSample> model_samples(const Subset& problems) {
  std::vector<TimeSample> out;
  for (const MeasuredProblem* q : problems) {
    for (const auto* table : {&q->times, &q->cluster_times}) {
      for (const auto& [tile, by_p] : *table) {
        const ResultRow* row = q->tile_rows.at(tile);
        for (const auto& [p, us] : by_p) out.push_back({q->shape, row->traits, row->kernel, p, us});
      }
    }
  }
  return out;
}

}  // namespace mha
