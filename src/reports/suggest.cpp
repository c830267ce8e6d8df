// Sweep plans that measure a few hundred points: the candidates a plan or a report holds, the seeds
// that let the time model fit a tile, then each problem's best-predicted unmeasured points.
#include "reports/suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "api/split_plan.h"
#include "common/errors.h"
#include "defaults/defaults_table.h"
#include "problems/problem.h"
#include "reports/journal.h"
#include "reports/report_json.h"

namespace mha {

namespace {

std::string tile_of_name(const std::string& kernel, const std::string& where) {
  const std::string tile = tile_of_kernel_name(kernel);
  if (tile.empty())
    throw UsageError(fmt::format("{}: kernel '{}' has no tile in its name (\"_bm<n>_bn<n>...\")",
                                 where, kernel));
  return tile;
}

ProblemShape shape_of_plan(const nlohmann::json& p, const std::string& where) {
  ProblemShape s;
  try {
    s.name = p.at("name").get<std::string>();
    s.batch = p.at("batch").get<int>();
    s.heads = p.at("heads").get<int>();
    s.kv_heads = p.at("kv_heads").get<int>();
    s.depth = p.at("depth").get<int>();
    s.dtype = p.at("dtype").get<std::string>();
    s.out_dtype = p.at("out_dtype").get<std::string>();
    s.kv_dtype = p.value("kv_dtype", s.dtype);
    s.kv_scale = p.value("kv_scale", std::string());
    s.soft_cap = p.value("soft_cap", 0.0);
    s.kv = p.at("kv").get<std::string>();
    s.page_size = p.at("page_size").get<int>();
    s.mask = p.at("mask").get<std::string>();
    s.window = p.at("window").get<int>();
    s.chunk = p.at("chunk").get<int>();
    s.has_sink = p.at("has_sink").get<bool>();
    s.keys = p.at("keys").get<int>();
    s.q_len = p.value("q_len", 1);
    s.lengths = p.at("lengths").get<std::string>();
    s.ragged_lengths = p.value("ragged_lengths", std::vector<int>());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
  if (s.batch < 1 || s.heads < 1 || s.kv_heads < 1 || s.depth < 1 || s.keys < 1 || s.q_len < 1)
    throw UsageError(
        fmt::format("{}: batch, heads, kv_heads, depth, keys and q_len must be positive", where));
  if (s.q_len > kMaxQueryTokens)
    throw UsageError(fmt::format("{}: q_len {} is more than {}", where, s.q_len, kMaxQueryTokens));
  return s;
}

bool is_ragged(const ProblemShape& s) { return !s.lengths.empty(); }

// (problem, tile, split) of a measured point.
using MeasuredPoint = std::tuple<std::string, std::string, int>;

std::set<MeasuredPoint> measured_points(const MeasuredReports& measured) {
  std::set<MeasuredPoint> out;
  for (const auto& [name, q] : measured.problems)
    for (const auto* table : {&q.times, &q.plan_times, &q.cluster_times})
      for (const auto& [tile, by_p] : *table)
        for (const auto& [p, us] : by_p) out.insert({name, tile, p});
  return out;
}

// Seeds for one tile: its problems at the corners of (batch x KV heads, keys), each at its
// smallest and largest split; then the corners' middle splits.
std::vector<const CandidatePoint*> seeds_of(const std::vector<const CandidatePoint*>& tile_points,
                                            int wanted) {
  auto work = [](const CandidatePoint* c) { return c->shape.batch * c->shape.kv_heads; };
  int lo_w = std::numeric_limits<int>::max(), hi_w = 0, lo_k = lo_w, hi_k = 0;
  for (const CandidatePoint* c : tile_points) {
    lo_w = std::min(lo_w, work(c)), hi_w = std::max(hi_w, work(c));
    lo_k = std::min(lo_k, c->shape.keys), hi_k = std::max(hi_k, c->shape.keys);
  }
  // The problem nearest each corner (in octaves), corners in a fixed order.
  std::vector<std::string> corners;
  for (const auto& [w, k] : {std::pair{lo_w, hi_k}, {hi_w, lo_k}, {lo_w, lo_k}, {hi_w, hi_k}}) {
    const CandidatePoint* best = nullptr;
    double best_d = 1e300;
    for (const CandidatePoint* c : tile_points) {
      if (is_split_plan(c->partitions)) continue;
      const double d = std::fabs(std::log2(work(c)) - std::log2(w)) +
                       std::fabs(std::log2(c->shape.keys) - std::log2(k));
      if (d < best_d - 1e-12) best_d = d, best = c;
    }
    if (best && std::find(corners.begin(), corners.end(), best->shape.name) == corners.end())
      corners.push_back(best->shape.name);
  }
  std::vector<const CandidatePoint*> out;
  for (int pass = 0; pass < 2 && static_cast<int>(out.size()) < wanted; ++pass) {
    for (const std::string& name : corners) {
      std::vector<const CandidatePoint*> splits;
      for (const CandidatePoint* c : tile_points)
        if (c->shape.name == name && !is_split_plan(c->partitions)) splits.push_back(c);
      std::sort(splits.begin(), splits.end(), [](const CandidatePoint* a, const CandidatePoint* b) {
        return a->partitions < b->partitions;
      });
      if (splits.empty()) continue;
      std::vector<const CandidatePoint*> pick =
          pass == 0 ? std::vector<const CandidatePoint*>{splits.front(), splits.back()}
                    : std::vector<const CandidatePoint*>{splits[splits.size() / 2]};
      for (const CandidatePoint* c : pick)
        if (static_cast<int>(out.size()) < wanted &&
            std::find(out.begin(), out.end(), c) == out.end())
          out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::vector<CandidatePoint> read_candidates(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "the candidates file");
  std::vector<CandidatePoint> out;
  if (j.is_object() && j.contains("rows")) {
    const Report r = read_report_json(path);
    for (const ResultRow& row : r.rows)
      out.push_back({row.problem, row.kernel, row.partitions, tile_id(row.traits), point_key(row)});
  } else if (j.is_object() && j.value("dry_run", false) && j.contains("problems") &&
             j["problems"].is_array()) {
    for (size_t i = 0; i < j["problems"].size(); ++i) {
      const nlohmann::json& p = j["problems"][i];
      const std::string where = fmt::format("{}: problems[{}]", path, i);
      const ProblemShape shape = shape_of_plan(p, where);
      if (!p.contains("kernels") || !p["kernels"].is_array() || !p.contains("partitions") ||
          !p["partitions"].is_array())
        throw UsageError(where + ": kernels and partitions must be lists");
      for (const auto& k : p["kernels"]) {
        if (!k.is_string()) throw UsageError(where + ": kernels: every entry must be a name");
        const std::string kernel = k.get<std::string>();
        for (const auto& parts : p["partitions"]) {
          if (!parts.is_number_integer())
            throw UsageError(where + ": partitions: every entry must be an integer split code");
          const int split = parts.get<int>();
          out.push_back({shape, kernel, split, tile_of_name(kernel, where),
                         point_key(kernel, shape.name, split)});
        }
      }
    }
  } else {
    throw UsageError(fmt::format(
        "{}: neither a sweep report (\"rows\") nor a `mha-tune sweep --dry-run --json` plan",
        path));
  }
  if (out.empty()) throw UsageError(path + ": holds no point to choose from");
  return out;
}

std::vector<CandidatePoint> suggest_points(const std::vector<CandidatePoint>& candidates,
                                           const MeasuredReports& measured, const TimeModel& model,
                                           int n) {
  const std::set<MeasuredPoint> done = measured_points(measured);
  std::map<std::pair<std::string, std::string>, int> measured_per_tile;  // (family, tile) -> points
  for (const auto& [name, q] : measured.problems)
    for (const auto* table : {&q.times, &q.cluster_times})
      for (const auto& [tile, by_p] : *table)
        measured_per_tile[{model_family(q.shape), tile}] += static_cast<int>(by_p.size());

  std::vector<const CandidatePoint*> open;
  std::set<std::string> seen_keys;
  for (const CandidatePoint& c : candidates)
    if (!done.count({c.shape.name, c.tile, c.partitions}) && seen_keys.insert(c.key).second)
      open.push_back(&c);

  std::vector<const CandidatePoint*> chosen;
  std::set<const CandidatePoint*> taken;
  // Seeds, one tile after another (round robin), for the tiles the model cannot fit yet.
  std::map<std::pair<std::string, std::string>, std::vector<const CandidatePoint*>> by_tile;
  for (const CandidatePoint* c : open) by_tile[{model_family(c->shape), c->tile}].push_back(c);
  std::vector<std::vector<const CandidatePoint*>> seed_lists;
  for (const auto& [key, points] : by_tile) {
    const int have = measured_per_tile.count(key) ? measured_per_tile.at(key) : 0;
    if (have < kSeedPointsPerTile)
      seed_lists.push_back(seeds_of(points, kSeedPointsPerTile - have));
  }
  for (size_t round = 0; static_cast<int>(chosen.size()) < n; ++round) {
    bool any = false;
    for (const auto& list : seed_lists) {
      if (round >= list.size() || static_cast<int>(chosen.size()) >= n) continue;
      any = true;
      if (taken.insert(list[round]).second) chosen.push_back(list[round]);
    }
    if (!any) break;
  }
  // Then each problem's points by predicted time, one problem after another.
  std::map<std::string, const TileModel*> tiles;  // family|tile -> fitted
  for (const TileModel& t : model.tiles) tiles[t.family + "|" + t.tile] = &t;
  std::map<std::string, std::vector<std::pair<double, const CandidatePoint*>>> by_problem;
  for (const CandidatePoint* c : open) {
    if (taken.count(c)) continue;
    double rank = std::numeric_limits<double>::max();  // a tile not fitted yet: last
    if (is_split_plan(c->partitions)) {
      rank = is_ragged(c->shape) ? -1.0 : std::numeric_limits<double>::max() / 2;
    } else {
      const auto t = tiles.find(model_family(c->shape) + "|" + c->tile);
      if (t != tiles.end()) rank = model_step_us(*t->second, model, c->shape, c->partitions);
    }
    by_problem[c->shape.name].push_back({rank, c});
  }
  for (auto& [name, list] : by_problem)
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t round = 0; static_cast<int>(chosen.size()) < n; ++round) {
    bool any = false;
    for (const auto& [name, list] : by_problem) {
      if (round >= list.size() || static_cast<int>(chosen.size()) >= n) continue;
      any = true;
      chosen.push_back(list[round].second);
    }
    if (!any) break;
  }
  std::vector<CandidatePoint> out;
  for (const CandidatePoint* c : chosen) out.push_back(*c);
  return out;
}

std::string suggestion_json(const std::vector<CandidatePoint>& points, int candidates,
                            int measured) {
  nlohmann::json list = nlohmann::json::array();
  for (const CandidatePoint& c : points)
    list.push_back({{"key", c.key},
                    {"problem", c.shape.name},
                    {"kernel", c.kernel},
                    {"split", split_label(c.partitions)}});
  return nlohmann::json{
             {"schema_version", 1},
             {"what",
              "points for `mha-tune sweep --points FILE`: seeds for tiles the time model "
              "cannot fit yet, then each problem's unmeasured points by predicted time"},
             {"candidates", candidates},
             {"measured", measured},
             {"points", list}}
             .dump(2) +
         "\n";
}

}  // namespace mha
