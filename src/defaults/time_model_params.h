// The time model's fitted parameters, per kernel family and tile: plain data that select fits
// (reports/time_model.h), the defaults table carries (defaults/defaults_table.h) and the library
// chooses with at run time (api/time_model_choice.h). docs/design.md, "The time model".
#pragma once

#include <set>
#include <string>
#include <vector>

#include "registry/kernel_registry.h"

namespace mha {

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

}  // namespace mha
