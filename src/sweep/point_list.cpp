// The point list `sweep --points` reads, checked against the plan it restricts.
#include "sweep/point_list.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.h"
#include "problems/json_strict.h"

namespace mha {

std::set<std::string> read_point_list(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--points {}: cannot be read", path));
  std::stringstream text;
  text << in.rdbuf();
  check_json_strict(text.str(), path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("--points {}: not valid JSON: {}", path, e.what()));
  }
  if (!j.is_object() || !j.contains("points") || !j["points"].is_array())
    throw UsageError(
        fmt::format("--points {}: points: expected a list (a `mha-tune select "
                    "--suggest` output)",
                    path));
  std::set<std::string> keys;
  for (size_t i = 0; i < j["points"].size(); ++i) {
    const nlohmann::json& p = j["points"][i];
    if (!p.is_object() || !p.contains("key") || !p["key"].is_string())
      throw UsageError(
          fmt::format("--points {}: points[{}].key: missing or not a string", path, i));
    keys.insert(p["key"].get<std::string>());
  }
  if (keys.empty()) throw UsageError(fmt::format("--points {}: points: empty", path));
  return keys;
}

std::set<std::string> restrict_to_points(const std::vector<SweepPoint>& plan,
                                         const std::set<std::string>& wanted,
                                         const std::optional<std::set<std::string>>& current,
                                         const std::string& path) {
  std::set<std::string> in_plan;
  for (const SweepPoint& p : plan) in_plan.insert(p.key);
  for (const std::string& key : wanted)
    if (!in_plan.count(key))
      throw UsageError(fmt::format(
          "--points {}: '{}' is not a point of this sweep's plan (a list for another config or "
          "build?)",
          path, key));
  std::set<std::string> out;
  for (const std::string& key : wanted)
    if (!current || current->count(key)) out.insert(key);
  if (out.empty())
    throw UsageError(
        fmt::format("--points {}: none of its {} point(s) is in this shard", path, wanted.size()));
  return out;
}

}  // namespace mha
