// The time model's per-tile fit: a grid over the nonlinear terms, least squares for the linear
// ones.
#include "reports/time_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "api/split_plan.h"
#include "common/kinds.h"
#include "common/split_code.h"

namespace mha {

namespace {

// Shared memory an SM can hand out to blocks (H100/H200: 228 KB, 1 KB of it reserved per block),
// and its thread limit: bounds on blocks per SM that the fit's grid does not exceed.
constexpr int kSmemPerSmBytes = 233472;
constexpr int kSmemReservedPerBlockBytes = 1024;
constexpr int kThreadsPerSm = 2048;
constexpr int kMaxBlocksPerSm = 8;

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
  // Several row blocks of a KV head read its tiles (in any sample: a multi-token tile's rows grow
  // with the samples' q_len).
  bool shares_tiles = false;
  for (const TimeSample* s : samples)
    shares_tiles = shares_tiles || s->traits.bm < model_rows(s->shape);
  double best_loss = std::numeric_limits<double>::infinity();
  for (double reread : kRereadFractions) {
    if (!shares_tiles && reread > 0) break;  // one row block per KV head: nothing is re-read
    std::vector<Prepared> rows;
    for (const TimeSample* s : samples)
      rows.push_back({step_geometry(s->traits, s->shape, s->partitions, reread), s->time_us});
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

}  // namespace

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
