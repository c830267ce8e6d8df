// The time model's predictions and its choice of a tile and split for a shape: what `mha-tune
// select` fits the model for and what the library runs where no bucket was measured
// (docs/design.md, "The time model"). The parameters are defaults/time_model_params.h.
#pragma once

#include <functional>
#include <string>

#include "common/result_row.h"
#include "defaults/defaults_table.h"
#include "defaults/time_model_params.h"
#include "registry/kernel_registry.h"

namespace mha {

// What a tile's kernels share across shapes: the compiled family (dtype key, depth, group, cache
// kind, mask, sink), e.g. "bf16_d128_g4_contig_null".
std::string model_family(const ProblemShape& p);
std::string model_family(const KernelTraits& t);
// A tile's identity across families and reports: "bm16_bn64_bk32_wm16_wn16_t128_s3_wsk".
std::string tile_id(const KernelTraits& t);

// Query heads per KV head of a shape.
int model_group(const ProblemShape& p);
// Query rows per KV head: its heads for each of the step's q_len tokens (what a tile's BM holds).
int model_rows(const ProblemShape& p);
// Keys each sequence's step reads: the mask's visible run ending at the query.
int visible_keys(const ProblemShape& p, int length);

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
StepGeometry step_geometry(const KernelTraits& t, const ProblemShape& p, int partitions,
                           double reread_fraction);
// The waves' time at `slots` resident blocks, one block's pace `tile_us` per tile and the stream
// rate `bytes_per_us`.
double stream_us(const StepGeometry& g, double slots, double tile_us, double bytes_per_us);

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

// The table's time model's choice for `shape`, as the library asks it: where `entry` (the one
// nearest `query`; null when the table has no entry for the shape's family) is not the shape's own
// measured bucket, the batch is not ragged (the model does not price plans) and the table carries
// a model; among the candidates `in_build` accepts. A family the table never measured takes the
// model's nearest fitted family, as select does: its first compiled kernel is no choice at all
// (Qwen's group 5 on an e4m3 cache: the BM-16 tile at 1.39x the BM-8 one). No tile otherwise:
// the entry's own choices answer.
ModelChoice table_model_choice(const DefaultsTable& table, const DefaultsEntry* entry,
                               const DefaultsQuery& query, const ProblemShape& shape,
                               const SplitFilter& in_build);

}  // namespace mha
