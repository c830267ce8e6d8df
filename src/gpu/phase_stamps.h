// The phase stamps one decode step records (kernels/phase_clock.cuh), as the host downloads them:
// gpu/phase_runner.h fills them, reports/phase_timeline.h summarises them.
#pragma once

#include <cstdint>

namespace mha {

// One decode block's stamps: globaltimer (ns) at start and exit; the SM's cycle counter at
// start, when the first tile landed, at the key loop's end, when the merge area was written, past
// a cluster combine's first barrier, and at exit (first_tile 0: no tile; cluster_met 0: no
// cluster).
struct DecodeBlockStamps {
  uint64_t start_ns = 0, exit_ns = 0;
  uint64_t start_cycle = 0, first_tile_cycle = 0, loop_end_cycle = 0, merged_cycle = 0,
           cluster_met_cycle = 0, combined_cycle = 0, exit_cycle = 0;
  int sm = 0;
};
// One reduce block's globaltimer stamps (waited 0: the block had nothing to combine).
struct ReduceBlockStamps {
  uint64_t start_ns = 0, waited_ns = 0, exit_ns = 0;
};

}  // namespace mha
