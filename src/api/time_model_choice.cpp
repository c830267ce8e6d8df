// The time model's geometry (blocks, waves, bytes of a step), its prediction for a tile and split,
// and the choice it makes for a shape.
#include "api/time_model_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "api/split_plan.h"
#include "common/kinds.h"
#include "common/split_code.h"
#include "defaults/defaults_table.h"

namespace mha {

namespace {

// The residual correction's reach: one octave of batch * kv_heads or of keys weighs a measured
// error by e^-0.5, and a prior weight of half a sample at zero error shrinks a lone distant one.
constexpr double kResidualOctaves = 1.0;
constexpr double kResidualPrior = 0.5;

// The choice is pessimistic: a candidate pays this share of its tile's fit error, scaled by how
// little was measured near the shape with its split (all of it with nothing near, none with many
// samples near), so that a prediction the data do not support must win by a margin. 0.5 was the
// best of 0, 0.5, 1, 2 and 4 on four held-out sweeps (worst 1.348 -> 1.149 on one; docs/
// performance.md), chosen before the held-out sweep that prices it.
constexpr double kRiskWeight = 0.5;

// How far a fitted family stands from the one a shape needs (same dtype and depth assumed).
int family_distance(const KernelTraits& fitted, const ProblemShape& p) {
  const int g_fit = std::max(1, fitted.group), g_want = std::max(1, model_group(p));
  return 16 * (fitted.kv != p.kv) + 4 * (fitted.mask != p.mask) +
         2 * std::abs(static_cast<int>(std::lround(std::log2(g_fit) - std::log2(g_want)))) +
         (fitted.has_sink != p.has_sink);
}

}  // namespace

int model_group(const ProblemShape& p) { return p.kv_heads > 0 ? p.heads / p.kv_heads : p.heads; }

int model_rows(const ProblemShape& p) { return model_group(p) * std::max(1, p.q_len); }

int visible_keys(const ProblemShape& p, int length) {
  const VisibleRange r =
      visible_range(length, mask_from_name(p.mask), p.window, p.chunk, std::max(1, p.q_len));
  return r.end - r.begin;
}

StepGeometry step_geometry(const KernelTraits& t, const ProblemShape& p, int partitions,
                           double reread_fraction) {
  StepGeometry g;
  const int parts = std::max(1, split_partitions(partitions));
  g.is_cluster = is_cluster_split(partitions);
  g.has_reduce = parts > 1 && !g.is_cluster;
  const int bn = std::max(1, t.bn), bm = std::max(1, t.bm);
  const double row_blocks = (model_rows(p) + bm - 1) / bm;
  const double bytes_per_key = 2.0 * p.depth * element_bytes(p.kv_dtype);
  // The row blocks of one KV head read the same K/V: the first from HBM, the others at
  // `reread_fraction` of its cost (0: L2 serves them, 1: each costs a full read).
  g.tile_bytes = bn * bytes_per_key * (1 + reread_fraction * (row_blocks - 1)) / row_blocks;
  // Each sequence's blocks and tiles; a uniform batch is `batch` copies of one (never a list of
  // them: a report's batch is a number from a file).
  double max_tiles = 0, sequences = 0;
  auto add = [&](int length, double copies) {
    const double tiles = std::ceil(visible_keys(p, length) / static_cast<double>(bn));
    g.blocks += copies * std::min<double>(parts, std::max(1.0, tiles));
    max_tiles = std::max(max_tiles, tiles);
    sequences += copies;
  };
  if (p.ragged_lengths.empty()) {
    add(p.keys, std::max(1, p.batch));
  } else {
    for (int length : p.ragged_lengths) add(length, 1);
  }
  g.blocks *= p.kv_heads * row_blocks;
  g.tiles_per_block = std::ceil(max_tiles / parts);
  if (g.has_reduce)
    g.partial_bytes =
        2.0 * sequences * p.heads * std::max(1, p.q_len) * parts * (p.depth + 2) * sizeof(float);
  return g;
}

// Time of the waves, each as long as its blocks' tiles take at the larger of one block's pace and
// the wave's share of the bandwidth. A step of one wave is priced by its blocks; a step of several
// pays its last, partial wave as a full one: the tail's blocks do not stream faster than a full
// wave's (group 8, batch 12, 22,000 keys on a BM-8 tile: 384 blocks in 264 slots measured 286.6 us
// at P 4 against 243.3 at P 1, where pricing the tail by its 120 blocks predicted 250.9). Priced
// so on four held-out sweeps, the worst costs went from 1.149, 1.246, 1.286 and 1.178 to 1.149,
// 1.149, 1.282 and 1.106 (docs/performance.md).
double stream_us(const StepGeometry& g, double slots, double tile_us, double bytes_per_us) {
  if (!(g.blocks > 0)) return 0;
  auto wave = [&](double blocks) {
    return g.tiles_per_block * std::max(tile_us, blocks * g.tile_bytes / bytes_per_us);
  };
  if (g.blocks <= slots) return wave(g.blocks);
  return std::ceil(g.blocks / slots) * wave(slots);
}

std::string tile_id(const KernelTraits& t) {
  using std::to_string;
  return "bm" + to_string(t.bm) + "_bn" + to_string(t.bn) + "_bk" + to_string(t.bk) + "_wm" +
         to_string(t.wm) + "_wn" + to_string(t.wn) + "_t" + to_string(t.threads) + "_s" +
         to_string(t.stages) + (t.warp_split_k ? "_wsk" : "");
}

std::string model_family(const ProblemShape& p) {
  return family_name(dtype_key(p.dtype, p.kv_dtype, p.soft_cap > 0, multi_token_step(p)), p.depth,
                     model_group(p), p.kv, p.mask, p.has_sink);
}

std::string model_family(const KernelTraits& t) {
  return family_name(dtype_key(t.dtype, cache_dtype(t), t.soft_cap, t.multi_token), t.depth,
                     t.group, t.kv, t.mask, t.has_sink);
}

double predict_step_us(const TileModel& tile, const TimeModel& model, const ProblemShape& shape,
                       int partitions) {
  const StepGeometry g = step_geometry(tile.traits, shape, partitions, tile.reread_fraction);
  const double bytes_per_us = tile.bandwidth_gbps * 1e3;
  const double slots = static_cast<double>(model.sm_count) * tile.blocks_per_sm;
  return tile.fixed_us + (g.has_reduce ? tile.reduce_us : 0) +
         (g.is_cluster ? tile.cluster_us : 0) + g.partial_bytes / bytes_per_us +
         stream_us(g, slots, tile.tile_us, bytes_per_us);
}

namespace {
// The residuals of `split` near `shape`: their total Gaussian weight and weighted sum.
struct NearbyResiduals {
  double weight = 0, weighted = 0;
};
NearbyResiduals nearby_residuals(const TileModel& tile, const ProblemShape& shape, int split) {
  const double work = std::log2(std::max(1, shape.batch * shape.kv_heads));
  const double keys = std::log2(std::max(1, shape.keys));
  double weight = 0, weighted = 0;
  for (const TileModel::Residual& r : tile.residuals) {
    if (r.split != split) continue;
    const double dw = r.log2_work - work, dk = r.log2_keys - keys;
    const double w = std::exp(-0.5 * (dw * dw + dk * dk) / (kResidualOctaves * kResidualOctaves));
    weight += w;
    weighted += w * r.log_ratio;
  }
  return {weight, weighted};
}

double correction_of(const NearbyResiduals& n) {
  return n.weight > 0 ? std::exp(n.weighted / (n.weight + kResidualPrior)) : 1.0;
}

double risk_of(const NearbyResiduals& n, const TileModel& tile) {
  return std::exp(kRiskWeight * tile.rms_rel_error *
                  std::sqrt(kResidualPrior / (n.weight + kResidualPrior)));
}
}  // namespace

double residual_factor(const TileModel& tile, const ProblemShape& shape, int split) {
  return correction_of(nearby_residuals(tile, shape, split));
}

double risk_factor(const TileModel& tile, const ProblemShape& shape, int split) {
  return risk_of(nearby_residuals(tile, shape, split), tile);
}

double model_step_us(const TileModel& tile, const TimeModel& model, const ProblemShape& shape,
                     int partitions) {
  const double us = predict_step_us(tile, model, shape, partitions);
  return model.corrects_residuals ? us * residual_factor(tile, shape, partitions) : us;
}

ModelChoice choose_by_model(const TimeModel& model, const ProblemShape& shape,
                            const SplitFilter& allowed) {
  ModelChoice c;
  const std::string want = model_family(shape);
  const std::string dtype =
      dtype_key(shape.dtype, shape.kv_dtype, shape.soft_cap > 0, multi_token_step(shape));
  // The family to draw tiles from: the shape's own, else the nearest fitted one.
  std::string family;
  int best_distance = std::numeric_limits<int>::max();
  for (const TileModel& t : model.tiles) {
    if (dtype_key(t.traits.dtype, cache_dtype(t.traits), t.traits.soft_cap, t.traits.multi_token) !=
            dtype ||
        t.traits.depth != shape.depth)
      continue;
    const int d = t.family == want ? -1 : family_distance(t.traits, shape);
    if (d < best_distance) {
      best_distance = d;
      family = t.family;
    }
  }
  if (family.empty()) return c;
  c.is_own_family = family == want;
  // Ranked by predicted time times the risk factor; the predictions are reported as they are.
  double best_score = 0, runner_up_score = 0;
  for (const TileModel& t : model.tiles) {
    if (t.family != family) continue;
    for (int split : t.splits) {
      if (allowed && !allowed(t, split)) continue;
      // One scan of the split's residuals serves the correction and the margin.
      const NearbyResiduals near = nearby_residuals(t, shape, split);
      double us = predict_step_us(t, model, shape, split);
      if (model.corrects_residuals) us *= correction_of(near);
      const double score = us * risk_of(near, t);
      if (!c.tile || score < best_score) {
        if (c.tile) {
          c.runner_up = c.tile->tile + " " + split_label(c.partitions);
          c.runner_up_us = c.predicted_us;
          runner_up_score = best_score;
        }
        c.tile = &t;
        c.partitions = split;
        c.predicted_us = us;
        best_score = score;
      } else if (c.runner_up.empty() || score < runner_up_score) {
        c.runner_up = t.tile + " " + split_label(split);
        c.runner_up_us = us;
        runner_up_score = score;
      }
    }
  }
  return c;
}

ModelChoice table_model_choice(const DefaultsTable& table, const DefaultsEntry* entry,
                               const DefaultsQuery& query, const ProblemShape& shape,
                               const SplitFilter& in_build) {
  if (table.model.tiles.empty() || query.ragged || (entry && is_own_bucket(*entry, query)))
    return {};
  return choose_by_model(table.model, shape, in_build);
}

}  // namespace mha
