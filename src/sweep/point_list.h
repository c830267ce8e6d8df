// `sweep --points FILE`: run only the listed points of the plan (a `select --suggest` output), so
// that a sweep measures a model-chosen few hundred points instead of every one.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sweep/sharding.h"

namespace mha {

// The point keys of FILE ({"points": [{"key": ...}, ...]}). Throws UsageError naming the file and
// what is wrong (not JSON, no list, an entry without a key, no point at all).
std::set<std::string> read_point_list(const std::string& path);

// The keys of `plan` that are in `wanted` and in `current` (the shard's, when set). Throws
// UsageError when a wanted key is not a point of the plan (another config's list) or when none is
// left.
std::set<std::string> restrict_to_points(const std::vector<SweepPoint>& plan,
                                         const std::set<std::string>& wanted,
                                         const std::optional<std::set<std::string>>& current,
                                         const std::string& path);

}  // namespace mha
