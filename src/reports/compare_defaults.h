// The tuned defaults' points judged like pairs (`compare --defaults TABLE`): for each problem of
// the baseline, the point a defaults table (select --out-defaults) chooses for its shape, in both
// reports. What an engine calling the library runs, gated beside every point and the best.
#pragma once

#include <vector>

#include "defaults/defaults_table.h"
#include "reports/compare.h"

namespace mha {

// One BestPair per baseline problem the table has an entry for: kSlower/kFaster/kSame as a pair
// with the pair's tolerance, kBroken when the candidate has no passed row of the chosen point,
// kNotComparable when the baseline has none (the table chose a point neither measured).
std::vector<BestPair> judge_defaults(const Report& baseline, const Report& candidate,
                                     const DefaultsTable& table, const CompareOptions& options);

}  // namespace mha
