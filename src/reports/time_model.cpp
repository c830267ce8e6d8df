// The time model's geometry (blocks, waves, bytes of a step), its per-tile fit (a grid over the
// nonlinear terms, least squares for the linear ones) and the choice it makes for a shape.
#include "reports/time_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "api/split_plan.h"
#include "common/kinds.h"
#include "defaults/defaults_table.h"

namespace mha {

namespace {

// Shared memory an SM can hand out to blocks (H100/H200: 228 KB, 1 KB of it reserved per block),
// and its thread limit: bounds on blocks per SM that the fit's grid does not exceed.
constexpr int kSmemPerSmBytes = 233472;
constexpr int kSmemReservedPerBlockBytes = 1024;
constexpr int kThreadsPerSm = 2048;
constexpr int kMaxBlocksPerSm = 8;

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

// The stream rate is a fraction of the run's measured peak (a tile that cannot keep enough bytes
// in flight never reaches it; rows measured up to 1.02x of the peak on long steps).
constexpr double kBandwidthFractions[] = {0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.03};
// One block's time per tile, from its floor up to 64x it: one block streams about 35 GB/s on the
// H200 (about one SM's share of the peak), and none streams more than twice an SM's share, the
// floor. Without it a fit on wide batches (bandwidth-bound at every split) leaves the per-block
// pace free, and the model then sends a batch-1 step to one partition.
constexpr int kTileUsSteps = 56;
constexpr double kBlockRateOfSmShare = 2.0;
constexpr double kTileUsSpan = 64.0;

int model_group(const ProblemShape& p) { return p.kv_heads > 0 ? p.heads / p.kv_heads : p.heads; }

// Keys each sequence's step reads: the mask's visible run ending at the query.
int visible_keys(const ProblemShape& p, int length) {
  const VisibleRange r = visible_range(length, mask_from_name(p.mask), p.window, p.chunk);
  return r.end - r.begin;
}

// What a step of `shape` on a tile at `partitions` streams and launches, before the tile's
// fitted rates are applied.
struct StepGeometry {
  double blocks = 0;           // decode blocks launched with work
  double tiles_per_block = 0;  // BN tiles the longest partition streams
  double tile_bytes = 0;       // HBM bytes of one block's tile (a KV head's row blocks share it)
  double partial_bytes = 0;    // partials written and read back by the reduce
  bool has_reduce = false;
  bool is_cluster = false;
};

StepGeometry geometry(const KernelTraits& t, const ProblemShape& p, int partitions,
                      double reread_fraction) {
  StepGeometry g;
  const int parts = std::max(1, split_partitions(partitions));
  g.is_cluster = is_cluster_split(partitions);
  g.has_reduce = parts > 1 && !g.is_cluster;
  const int bn = std::max(1, t.bn), bm = std::max(1, t.bm);
  const double row_blocks = (model_group(p) + bm - 1) / bm;
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
    g.partial_bytes = 2.0 * sequences * p.heads * parts * (p.depth + 2) * sizeof(float);
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

int max_blocks_per_sm(const KernelTraits& t) {
  const int by_smem = kSmemPerSmBytes / (std::max(0, t.smem_bytes) + kSmemReservedPerBlockBytes);
  const int by_threads = kThreadsPerSm / std::max(32, t.threads);
  return std::max(1, std::min({by_smem, by_threads, kMaxBlocksPerSm}));
}

struct Prepared {
  StepGeometry g;
  double y = 0;
};

// What a second row block's read of a KV head's tile costs, as a fraction of the first's.
constexpr double kRereadFractions[] = {0.0, 0.25, 0.5, 0.75, 1.0};

// Least squares of the relative error over the linear terms (fixed, reduce, cluster) given the
// nonlinear ones, each coefficient at least 0 (every subset of free terms tried).
struct LinearFit {
  double coef[3] = {0, 0, 0};
  double loss = std::numeric_limits<double>::infinity();
};

LinearFit fit_linear(const std::vector<Prepared>& rows, const std::vector<double>& rest_us) {
  // Columns: 1, [reduce], [cluster]; target y - rest; weight 1 / y^2.
  double a[3][3] = {}, b[3] = {}, tt = 0;
  bool present[3] = {true, false, false};
  for (size_t i = 0; i < rows.size(); ++i) {
    const double x[3] = {1.0, rows[i].g.has_reduce ? 1.0 : 0.0, rows[i].g.is_cluster ? 1.0 : 0.0};
    const double w = 1.0 / (rows[i].y * rows[i].y);
    const double t = rows[i].y - rest_us[i];
    tt += w * t * t;
    for (int r = 0; r < 3; ++r) {
      present[r] = present[r] || x[r] != 0;
      b[r] += w * x[r] * t;
      for (int c = 0; c < 3; ++c) a[r][c] += w * x[r] * x[c];
    }
  }
  LinearFit best;
  for (int mask = 0; mask < 8; ++mask) {
    int idx[3], n = 0;
    bool usable = true;
    for (int r = 0; r < 3; ++r)
      if (mask & (1 << r)) {
        usable = usable && present[r];
        idx[n++] = r;
      }
    if (!usable) continue;
    double coef[3] = {0, 0, 0};
    if (n > 0) {  // Gaussian elimination on the n x n system
      double m[3][4];
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) m[r][c] = a[idx[r]][idx[c]];
        m[r][n] = b[idx[r]];
      }
      bool singular = false;
      for (int c = 0; c < n && !singular; ++c) {
        int pivot = c;
        for (int r = c + 1; r < n; ++r)
          if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
        if (std::fabs(m[pivot][c]) < 1e-300) {
          singular = true;
          break;
        }
        for (int k = 0; k <= n; ++k) std::swap(m[c][k], m[pivot][k]);
        for (int r = 0; r < n; ++r) {
          if (r == c) continue;
          const double f = m[r][c] / m[c][c];
          for (int k = c; k <= n; ++k) m[r][k] -= f * m[c][k];
        }
      }
      if (singular) continue;
      bool negative = false;
      for (int r = 0; r < n; ++r) {
        coef[idx[r]] = m[r][n] / m[r][r];
        negative = negative || coef[idx[r]] < 0;
      }
      if (negative) continue;
    }
    // sum w (t - x.c)^2 = sum w t^2 - 2 c.b + c'Ac
    double loss = tt;
    for (int r = 0; r < 3; ++r) {
      loss -= 2 * coef[r] * b[r];
      for (int k = 0; k < 3; ++k) loss += coef[r] * a[r][k] * coef[k];
    }
    loss = std::max(loss, 0.0);  // the expansion rounds below 0 on an exact fit
    if (loss < best.loss) {
      best.loss = loss;
      std::copy(coef, coef + 3, best.coef);
    }
  }
  return best;
}

TileModel fit_tile(const std::vector<const TimeSample*>& samples, int sm_count, double peak_gbps) {
  TileModel m;
  const TimeSample& first = *samples.front();
  m.family = model_family(first.traits);
  m.tile = tile_id(first.traits);
  m.kernel = first.kernel;
  m.traits = first.traits;
  m.rows = static_cast<int>(samples.size());
  for (const TimeSample* s : samples) m.splits.insert(s->partitions);
  const double peak_bytes_per_us = peak_gbps * 1e3;
  const double full_tile_bytes =
      first.traits.bn * 2.0 * first.shape.depth * element_bytes(first.shape.kv_dtype);
  const double tile_us_floor =
      full_tile_bytes / (kBlockRateOfSmShare * peak_bytes_per_us / std::max(1, sm_count));
  const bool shares_tiles = first.traits.bm < model_group(first.shape);
  double best_loss = std::numeric_limits<double>::infinity();
  for (double reread : kRereadFractions) {
    if (!shares_tiles && reread > 0) break;  // one row block per KV head: nothing is re-read
    std::vector<Prepared> rows;
    for (const TimeSample* s : samples)
      rows.push_back({geometry(s->traits, s->shape, s->partitions, reread), s->time_us});
    std::vector<double> rest(rows.size());
    for (int occupancy = 1; occupancy <= max_blocks_per_sm(first.traits); ++occupancy) {
      const double slots = static_cast<double>(sm_count) * occupancy;
      for (double fraction : kBandwidthFractions) {
        const double bytes_per_us = peak_bytes_per_us * fraction;
        for (int step = 0; step < kTileUsSteps; ++step) {
          const double tile_us = tile_us_floor * std::pow(kTileUsSpan, step / (kTileUsSteps - 1.0));
          for (size_t i = 0; i < rows.size(); ++i)
            rest[i] = stream_us(rows[i].g, slots, tile_us, bytes_per_us) +
                      rows[i].g.partial_bytes / bytes_per_us;
          const LinearFit fit = fit_linear(rows, rest);
          if (fit.loss < best_loss) {
            best_loss = fit.loss;
            m.reread_fraction = reread;
            m.blocks_per_sm = occupancy;
            m.bandwidth_gbps = peak_gbps * fraction;
            m.tile_us = tile_us;
            m.fixed_us = fit.coef[0];
            m.reduce_us = fit.coef[1];
            m.cluster_us = fit.coef[2];
          }
        }
      }
    }
  }
  m.rms_rel_error = std::sqrt(best_loss / samples.size());
  return m;
}

// How far a fitted family stands from the one a shape needs (same dtype and depth assumed).
int family_distance(const KernelTraits& fitted, const ProblemShape& p) {
  const int g_fit = std::max(1, fitted.group), g_want = std::max(1, model_group(p));
  return 16 * (fitted.kv != p.kv) + 4 * (fitted.mask != p.mask) +
         2 * std::abs(static_cast<int>(std::lround(std::log2(g_fit) - std::log2(g_want)))) +
         (fitted.has_sink != p.has_sink);
}

}  // namespace

std::string tile_id(const KernelTraits& t) {
  return fmt::format("bm{}_bn{}_bk{}_wm{}_wn{}_t{}_s{}{}", t.bm, t.bn, t.bk, t.wm, t.wn, t.threads,
                     t.stages, t.warp_split_k ? "_wsk" : "");
}

std::string model_family(const ProblemShape& p) {
  return family_name(dtype_key(p.dtype, p.kv_dtype, p.soft_cap > 0), p.depth, model_group(p), p.kv,
                     p.mask, p.has_sink);
}

std::string model_family(const KernelTraits& t) {
  return family_name(dtype_key(t.dtype, cache_dtype(t), t.soft_cap), t.depth, t.group, t.kv, t.mask,
                     t.has_sink);
}

TimeModel fit_time_model(const std::vector<TimeSample>& samples, int sm_count,
                         double peak_read_gbps) {
  TimeModel model;
  model.sm_count = sm_count;
  // A report from before the peak was recorded: the fastest K/V stream any sample achieved.
  if (!(peak_read_gbps > 0)) {
    for (const TimeSample& s : samples) {
      if (!(s.time_us > 0)) continue;
      const double per_key =
          2.0 * s.shape.kv_heads * s.shape.depth * element_bytes(s.shape.kv_dtype);
      double bytes = 0;
      if (s.shape.ragged_lengths.empty())
        bytes = per_key * std::max(1, s.shape.batch) * visible_keys(s.shape, s.shape.keys);
      for (int length : s.shape.ragged_lengths) bytes += per_key * visible_keys(s.shape, length);
      peak_read_gbps = std::max(peak_read_gbps, bytes / s.time_us / 1e3);
    }
  }
  model.peak_read_gbps = peak_read_gbps;
  if (!(peak_read_gbps > 0)) return model;
  std::map<std::pair<std::string, std::string>, std::vector<const TimeSample*>> by_tile;
  for (const TimeSample& s : samples) {
    if (is_split_plan(s.partitions) || !(s.time_us > 0) || !std::isfinite(s.time_us)) continue;
    by_tile[{model_family(s.traits), tile_id(s.traits)}].push_back(&s);
  }
  for (const auto& [key, rows] : by_tile) {
    if (rows.size() < 3) continue;  // five terms from fewer points would be a guess
    model.tiles.push_back(fit_tile(rows, sm_count, peak_read_gbps));
    TileModel& tile = model.tiles.back();
    for (const TimeSample* s : rows) {
      const double predicted = predict_step_us(tile, model, s->shape, s->partitions);
      if (predicted > 0)
        tile.residuals.push_back(
            {s->partitions, std::log2(std::max(1, s->shape.batch * s->shape.kv_heads)),
             std::log2(std::max(1, s->shape.keys)), std::log(s->time_us / predicted)});
    }
  }
  return model;
}

double predict_step_us(const TileModel& tile, const TimeModel& model, const ProblemShape& shape,
                       int partitions) {
  const StepGeometry g = geometry(tile.traits, shape, partitions, tile.reread_fraction);
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
  const std::string dtype = dtype_key(shape.dtype, shape.kv_dtype, shape.soft_cap > 0);
  // The family to draw tiles from: the shape's own, else the nearest fitted one.
  std::string family;
  int best_distance = std::numeric_limits<int>::max();
  for (const TileModel& t : model.tiles) {
    if (dtype_key(t.traits.dtype, cache_dtype(t.traits), t.traits.soft_cap) != dtype ||
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
          c.runner_up = fmt::format("{} {}", c.tile->tile, split_label(c.partitions));
          c.runner_up_us = c.predicted_us;
          runner_up_score = best_score;
        }
        c.tile = &t;
        c.partitions = split;
        c.predicted_us = us;
        best_score = score;
      } else if (c.runner_up.empty() || score < runner_up_score) {
        c.runner_up = fmt::format("{} {}", t.tile, split_label(split));
        c.runner_up_us = us;
        runner_up_score = score;
      }
    }
  }
  return c;
}

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
           "bytes / bandwidth + sum over waves of (key tiles per partition) * max(tile_us, blocks "
           "in the wave * tile bytes / bandwidth); waves of sm_count * blocks_per_sm blocks"},
          {"corrects_residuals", model.corrects_residuals},
          {"residual_definition",
           "corrected: the prediction times exp(sum w r / (sum w + 0.5)) over the residuals r = "
           "log(measured / predicted) of the same split, w = exp(-d^2 / 2), d the distance in "
           "octaves of batch * kv_heads and of keys"},
          {"sm_count", model.sm_count},
          {"peak_read_gbps", model.peak_read_gbps},
          {"tiles", tiles}};
}

std::string time_model_summary(const TimeModel& model) {
  if (model.tiles.empty())
    return "\nTime model: no tile with three or more fixed or cluster splits measured\n";
  std::vector<double> errors;
  std::set<std::string> families;
  for (const TileModel& t : model.tiles) {
    errors.push_back(t.rms_rel_error);
    families.insert(t.family);
  }
  std::sort(errors.begin(), errors.end());
  return fmt::format(
      "\nTime model ({}): {} tile(s) of {} famil{} fitted (peak {:.0f} GB/s, {} SMs); rms relative "
      "error of a tile's analytic fit on its own rows: median {:.3f}, worst {:.3f}\n",
      model.corrects_residuals ? "corrected by nearby residuals" : "analytic", model.tiles.size(),
      families.size(), families.size() == 1 ? "y" : "ies", model.peak_read_gbps, model.sm_count,
      errors[errors.size() / 2], errors.back());
}

}  // namespace mha
