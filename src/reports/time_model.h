// A decode step's time on any shape, from the physics of a memory-bound step, fitted per kernel
// family and tile from sweep rows: what `mha-tune select` uses to choose the tile and the split for
// shapes it did not measure (docs/design.md, "The time model").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/result_row.h"
#include "registry/kernel_registry.h"

namespace mha {

// What a tile's kernels share across shapes: the compiled family (dtype key, depth, group, cache
// kind, mask, sink), e.g. "bf16_d128_g4_contig_null".
std::string model_family(const ProblemShape& p);
std::string model_family(const KernelTraits& t);
// A tile's identity across families and reports: "bm16_bn64_bk32_wm16_wn16_t128_s3_wsk".
std::string tile_id(const KernelTraits& t);

// One tile of one family. Predicted step time for P partitions (fixed or cluster):
//   fixed_us + reduce_us [P > 1, reduce launch] + cluster_us [cluster split]
//   + partial bytes / bandwidth [reduce launch]
//   + waves * tiles_per_partition * max(tile_us, blocks_in_wave * tile_bytes / bandwidth)
// with blocks = batch * kv_heads * row_blocks * min(P, key tiles), slots = sm_count *
// blocks_per_sm, one wave of `blocks` when they fit the slots, else ceil(blocks / slots) full
// waves of `slots` (a partial last wave costs a full one), tile_bytes the K/V bytes of one BN tile
// (a KV head's later row blocks at reread_fraction of the first's bytes).
struct TileModel {
  std::string family;
  std::string tile;    // select's tile id ("bm16_bn64_bk32_wm16_wn16_t128_s3_wsk")
  std::string kernel;  // a measured instance with this tile
  KernelTraits traits;
  double fixed_us = 0;        // launch, prologue and epilogue of one step
  double tile_us = 0;         // one block's time per BN tile when bandwidth does not bind
  int blocks_per_sm = 1;      // resident blocks per SM (shared memory, threads and registers)
  double bandwidth_gbps = 0;  // the stream rate of all blocks together
  double reread_fraction =
      0;                  // a KV head's second row block reads its tile at this share of a read
  double reduce_us = 0;   // the reduce launch of a split step
  double cluster_us = 0;  // a cluster combine
  std::set<int> splits;   // splits measured (counts and cluster codes): the candidates
  // The fit's error on each sample, log(measured / predicted), where it was measured: nearby
  // shapes take a kernel-weighted share of it (residual_factor).
  struct Residual {
    int split = 1;
    double log2_work = 0;  // batch * kv_heads
    double log2_keys = 0;
    double log_ratio = 0;
  };
  std::vector<Residual> residuals;
  int rows = 0;              // samples fitted
  double rms_rel_error = 0;  // of the fit on its own samples
};

struct TimeModel {
  int sm_count = 0;
  double peak_read_gbps = 0;
  bool corrects_residuals = true;  // false: the analytic prediction alone
  std::vector<TileModel> tiles;    // sorted by (family, tile)
};

// One measured point: the fit's input.
struct TimeSample {
  ProblemShape shape;
  KernelTraits traits;
  std::string kernel;
  int partitions = 1;  // a count or a cluster code; split plans are not modelled
  double time_us = 0;
};

// Fits every (family, tile) with at least three samples. Plans are ignored (a plan's chunks are
// chosen when it runs; select prices plans by measurement).
TimeModel fit_time_model(const std::vector<TimeSample>& samples, int sm_count,
                         double peak_read_gbps);

// Predicted step time (us) of `tile` on `shape` at `partitions` (a count or a cluster code).
double predict_step_us(const TileModel& tile, const TimeModel& model, const ProblemShape& shape,
                       int partitions);

// The factor a prediction of `tile` at `split` on `shape` takes from the fit's errors on the same
// split nearby (Gaussian weights, one octave wide in batch * kv_heads and in keys, shrunk towards 1
// where little was measured near): 1 where that split was never measured.
double residual_factor(const TileModel& tile, const ProblemShape& shape, int split);
// What choose_by_model multiplies a prediction by to rank it: exp(0.5 * the tile's rms fit error
// * sqrt(0.5 / (0.5 + the residual weight of `split` near `shape`))), so an unsupported
// prediction must win by a margin.
double risk_factor(const TileModel& tile, const ProblemShape& shape, int split);

// predict_step_us, times residual_factor when the model corrects residuals.
double model_step_us(const TileModel& tile, const TimeModel& model, const ProblemShape& shape,
                     int partitions);

struct ModelChoice {
  const TileModel* tile = nullptr;  // nullptr: no fitted tile of the shape's dtype and depth
  int partitions = 0;
  double predicted_us = 0;
  bool is_own_family = false;  // false: the nearest fitted family's tiles stood in
  std::string runner_up;       // "<tile> P<split>" of the second best prediction
  double runner_up_us = 0;
};

// The (tile, split) of least predicted time (times risk_factor) among the fitted tiles of the
// shape's family and their measured splits; a family never fitted borrows the nearest one of the
// same dtype and depth (cache kind, mask, then group octaves apart). `allowed` (optional) narrows
// the candidates, e.g. to the points an evaluation measured.
using SplitFilter = std::function<bool(const TileModel&, int split)>;
ModelChoice choose_by_model(const TimeModel& model, const ProblemShape& shape,
                            const SplitFilter& allowed = {});

// The fitted parameters per tile (select's --out-json "time_model"), and a few lines on the fit.
nlohmann::json time_model_to_json(const TimeModel& model);
std::string time_model_summary(const TimeModel& model);

}  // namespace mha
