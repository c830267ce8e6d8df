// The time model's parameters to JSON and back; a tile carries its kernel's traits, so that a
// reader needs no registry to predict with it.
#include "defaults/time_model_json.h"

#include <stdexcept>

#include "common/split_code.h"

namespace mha {

namespace {

nlohmann::json traits_to_json(const KernelTraits& t) {
  return {{"dtype", t.dtype},
          {"out_dtype", t.out_dtype},
          {"kv_dtype", t.kv_dtype},
          {"depth", t.depth},
          {"group", t.group},
          {"kv", t.kv},
          {"mask", t.mask},
          {"has_sink", t.has_sink},
          {"soft_cap", t.soft_cap},
          {"multi_token", t.multi_token},
          {"bm", t.bm},
          {"bn", t.bn},
          {"bk", t.bk},
          {"wm", t.wm},
          {"wn", t.wn},
          {"threads", t.threads},
          {"stages", t.stages},
          {"warp_split_k", t.warp_split_k},
          {"smem_bytes", t.smem_bytes}};
}

// j[key] as T, or an error naming where it is.
template <class T>
T get(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw std::invalid_argument(where + ": missing \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(where + ": \"" + key + "\" has the wrong type");
  }
}

KernelTraits traits_from_json(const nlohmann::json& j, const std::string& where) {
  KernelTraits t;
  t.dtype = get<std::string>(j, "dtype", where);
  t.out_dtype = get<std::string>(j, "out_dtype", where);
  t.kv_dtype = get<std::string>(j, "kv_dtype", where);
  t.depth = get<int>(j, "depth", where);
  t.group = get<int>(j, "group", where);
  t.kv = get<std::string>(j, "kv", where);
  t.mask = get<std::string>(j, "mask", where);
  t.has_sink = get<bool>(j, "has_sink", where);
  t.soft_cap = get<bool>(j, "soft_cap", where);
  // Models fitted before multi-token kernels hold single-token tiles only.
  t.multi_token =
      j.is_object() && j.contains("multi_token") ? get<bool>(j, "multi_token", where) : false;
  t.bm = get<int>(j, "bm", where);
  t.bn = get<int>(j, "bn", where);
  t.bk = get<int>(j, "bk", where);
  t.wm = get<int>(j, "wm", where);
  t.wn = get<int>(j, "wn", where);
  t.threads = get<int>(j, "threads", where);
  t.stages = get<int>(j, "stages", where);
  t.warp_split_k = get<bool>(j, "warp_split_k", where);
  t.smem_bytes = get<int>(j, "smem_bytes", where);
  if (t.depth <= 0 || t.group <= 0 || t.bm <= 0 || t.bn <= 0)
    throw std::invalid_argument(where + ": depth, group, bm and bn must be positive");
  return t;
}

int split_of(const nlohmann::json& j, const std::string& where) {
  try {
    return j.is_number_integer() ? j.get<int>() : parse_split_label(j.get<std::string>());
  } catch (const std::exception& e) {
    throw std::invalid_argument(where + ": bad split: " + e.what());
  }
}

}  // namespace

nlohmann::json time_model_to_json(const TimeModel& model) {
  nlohmann::json tiles = nlohmann::json::array();
  for (const TileModel& t : model.tiles) {
    std::vector<std::string> splits;
    for (int p : t.splits) splits.push_back(split_label(p));
    nlohmann::json residuals = nlohmann::json::array();  // [split, log2 work, log2 keys, log ratio]
    for (const TileModel::Residual& r : t.residuals)
      residuals.push_back({split_label(r.split), r.log2_work, r.log2_keys, r.log_ratio});
    tiles.push_back({{"family", t.family},
                     {"tile", t.tile},
                     {"kernel", t.kernel},
                     {"traits", traits_to_json(t.traits)},
                     {"fixed_us", t.fixed_us},
                     {"tile_us", t.tile_us},
                     {"blocks_per_sm", t.blocks_per_sm},
                     {"reread_fraction", t.reread_fraction},
                     {"bandwidth_gbps", t.bandwidth_gbps},
                     {"reduce_us", t.reduce_us},
                     {"cluster_us", t.cluster_us},
                     {"splits", splits},
                     {"residuals", residuals},
                     {"rows", t.rows},
                     {"rms_rel_error", t.rms_rel_error}});
  }
  return {{"definition",
           "step us = fixed_us + reduce_us [reduce launch] + cluster_us [cluster split] + partial "
           "bytes / bandwidth + waves * (key tiles per partition) * max(tile_us, blocks in the "
           "wave * tile bytes / bandwidth); slots = sm_count * blocks_per_sm; blocks that fit the "
           "slots are one wave of their number, more are ceil(blocks / slots) full waves"},
          {"corrects_residuals", model.corrects_residuals},
          {"residual_definition",
           "corrected: the prediction times exp(sum w r / (sum w + 0.5)) over the residuals r = "
           "log(measured / predicted) of the same split, w = exp(-d^2 / 2), d the distance in "
           "octaves of batch * kv_heads and of keys"},
          {"sm_count", model.sm_count},
          {"peak_read_gbps", model.peak_read_gbps},
          {"tiles", tiles}};
}

TimeModel time_model_from_json(const nlohmann::json& j, const std::string& where) {
  TimeModel m;
  m.sm_count = get<int>(j, "sm_count", where);
  m.peak_read_gbps = get<double>(j, "peak_read_gbps", where);
  m.corrects_residuals = get<bool>(j, "corrects_residuals", where);
  if (m.sm_count <= 0 || !(m.peak_read_gbps > 0))
    throw std::invalid_argument(where + ": sm_count and peak_read_gbps must be positive");
  const nlohmann::json tiles = get<nlohmann::json>(j, "tiles", where);
  if (!tiles.is_array()) throw std::invalid_argument(where + ": \"tiles\" must be an array");
  for (size_t i = 0; i < tiles.size(); ++i) {
    const std::string at = where + ".tiles[" + std::to_string(i) + "]";
    const nlohmann::json& e = tiles[i];
    TileModel t;
    t.family = get<std::string>(e, "family", at);
    t.tile = get<std::string>(e, "tile", at);
    t.kernel = get<std::string>(e, "kernel", at);
    t.traits = traits_from_json(get<nlohmann::json>(e, "traits", at), at + ".traits");
    t.fixed_us = get<double>(e, "fixed_us", at);
    t.tile_us = get<double>(e, "tile_us", at);
    t.blocks_per_sm = get<int>(e, "blocks_per_sm", at);
    t.reread_fraction = get<double>(e, "reread_fraction", at);
    t.bandwidth_gbps = get<double>(e, "bandwidth_gbps", at);
    t.reduce_us = get<double>(e, "reduce_us", at);
    t.cluster_us = get<double>(e, "cluster_us", at);
    t.rows = get<int>(e, "rows", at);
    t.rms_rel_error = get<double>(e, "rms_rel_error", at);
    if (t.blocks_per_sm <= 0 || !(t.bandwidth_gbps > 0) || !(t.tile_us > 0))
      throw std::invalid_argument(at +
                                  ": blocks_per_sm, bandwidth_gbps and tile_us must be positive");
    for (const nlohmann::json& s : get<nlohmann::json>(e, "splits", at))
      t.splits.insert(split_of(s, at + ".splits"));
    for (const nlohmann::json& r : get<nlohmann::json>(e, "residuals", at)) {
      if (!r.is_array() || r.size() != 4)
        throw std::invalid_argument(at +
                                    ".residuals: each is [split, log2 work, log2 keys, log ratio]");
      t.residuals.push_back({split_of(r[0], at + ".residuals"), r[1].get<double>(),
                             r[2].get<double>(), r[3].get<double>()});
    }
    m.tiles.push_back(std::move(t));
  }
  return m;
}

}  // namespace mha
