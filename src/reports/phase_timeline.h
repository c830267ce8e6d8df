// Where a decode step's time goes, from the phase stamps a `phases` build records
// (kernels/phase_clock.cuh): when the decode blocks start, how long each waits for its first
// K/V tile, streams, and finishes, and when the reduce starts, gets its partials and ends.
// Pure host code over the downloaded stamps (tested on the host, tests/test_phase_timeline.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/phase_stamps.h"

namespace mha {

// Times in µs from the first decode block's start. The per-block phases are medians and
// maxima over the blocks that had at least one tile.
struct PhaseSummary {
  int decode_blocks = 0, working_blocks = 0, reduce_blocks = 0;
  int max_blocks_per_sm = 0;            // working blocks on the busiest SM
  double ns_per_cycle = 0;              // from the blocks' two clocks (or the nominal clock)
  double start_spread_us = 0;           // the last decode block's start
  double ramp_us = 0, ramp_max_us = 0;  // start -> first tile landed
  double loop_us = 0, loop_max_us = 0;  // first tile landed -> key loop over
  double tail_us = 0, tail_max_us = 0;  // key loop over -> exit, in three parts:
  double merge_us = 0;                  //   key loop over -> the warps' copies in the merge area
  double cluster_wait_us = 0;   //   -> past the cluster's first barrier (0 without a cluster)
  double finish_us = 0;         //   -> exit: the partials' write, or the cluster's combine
  double last_barrier_us = 0;   //   of finish, a cluster combine's last barrier (0 without one)
  double decode_end_us = 0;     // the last decode block's exit
  double reduce_start_us = 0;   // the first reduce block's start (0 without a reduce)
  double reduce_waited_us = 0;  // the last reduce block past its wait for the decode grid
  double reduce_end_us = 0;     // the last reduce block's exit
  double step_us = 0;           // max(decode_end_us, reduce_end_us)
  // The smallest gap between distinct globaltimer stamps seen: the cross-block times (last
  // start, decode end, the reduce's) are no finer than this; the phases in a block use cycles.
  double timer_step_ns = 0;
};

// Summarises one step. nominal_ns_per_cycle converts cycles where no block lived long enough
// (1 µs) to calibrate the cycle counter against the timer. Throws std::invalid_argument
// when no decode block has stamps.
PhaseSummary summarise_phases(const std::vector<DecodeBlockStamps>& decode,
                              const std::vector<ReduceBlockStamps>& reduce,
                              double nominal_ns_per_cycle);

// Field by field median of several steps' summaries (counts from the first).
PhaseSummary median_phases(const std::vector<PhaseSummary>& steps);

// The markdown table `mha-tune phases` prints: its header, and one row per point.
std::string phase_table_header();
// timed_us: the point's step time measured as the sweep measures it (graph replays), so that
// timed - step is what the launches and the gaps between kernels cost.
std::string phase_table_row(const std::string& kernel, const std::string& problem,
                            const std::string& split, const PhaseSummary& s, double timed_us);

}  // namespace mha
