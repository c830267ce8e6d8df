// `mha-tune select --suggest N --candidates PLAN`: the next N points a sweep should measure, so
// that a new model shape is tuned from a few hundred points instead of every one. Tiles the time
// model cannot fit yet get a spread of seed points; then each problem's unmeasured points in the
// order of their predicted time, one problem after another.
#pragma once

#include <string>
#include <vector>

#include "reports/measured_problems.h"
#include "reports/time_model.h"

namespace mha {

// One point a sweep could measure.
struct CandidatePoint {
  ProblemShape shape;
  std::string kernel;
  int partitions = 1;  // a count, a plan or a cluster code
  std::string tile;    // the kernel's tile id (its name from "bm" on)
  std::string key;     // point_key(kernel, problem, partitions): what `sweep --points` reads
};

// The points of a `sweep --dry-run --json` plan (every problem x kernel x split) or of a sweep
// report's rows. Throws UsageError naming the file and what is wrong.
std::vector<CandidatePoint> read_candidates(const std::string& path);

// Up to n candidates not measured yet (`measured` may be empty): first, for every (family, tile)
// with fewer than kSeedPointsPerTile measured points, seeds spread over its problems' extremes of
// batch x KV heads and keys and over its splits; then, problem by problem in turn, each problem's
// next candidate by the model's predicted time (split plans, which the model does not price,
// before the fixed splits of a ragged batch and after them otherwise).
constexpr int kSeedPointsPerTile = 8;
std::vector<CandidatePoint> suggest_points(const std::vector<CandidatePoint>& candidates,
                                           const MeasuredReports& measured, const TimeModel& model,
                                           int n);

// {"points": [{"key", "problem", "kernel", "split"}...], "why": ...}: what `sweep --points` reads.
std::string suggestion_json(const std::vector<CandidatePoint>& points, int candidates,
                            int measured);

}  // namespace mha
