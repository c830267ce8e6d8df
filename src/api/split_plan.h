// The balanced split-KV plan: every block of a decode step gets about the same number of visible
// key tiles across the whole batch. Each sequence is cut into chunks of one planned size (short
// sequences get one chunk and write their output directly, long ones many), the chunks become a
// work list (longest first), and the reduce merges a variable number of partials per sequence.
// The plan is host data copied into fixed-size device buffers, so one captured CUDA graph
// replays for any lengths the capacity holds (StepBuffers owns them).
//
// On the partitions axis of problems and reports a plan is an encoded negative value (fixed
// partition counts are >= 1), so points, journals and compare keys stay (kernel, problem, int).
// A cluster split (P fixed partitions, 2..8, combined inside the decode launch through a
// thread-block cluster, kernels/cluster_combine.cuh) is P + kClusterSplitBase: a third kind of
// split on the same axis, measured and chosen beside the others.
#pragma once

#include <string>
#include <vector>

#include "common/split_code.h"
#include "kernels/decode_params.cuh"
#include "kernels/masks.cuh"

namespace mha {

// SplitPlanKnobs, the split code's encoding and its text form: split_code.h.

// The kernel and GPU facts a plan depends on.
struct SplitPlanTarget {
  int tile_keys = 64;       // BN: chunks are whole tiles
  int blocks_per_item = 1;  // kv_heads x row blocks per KV head: blocks one work item launches
  int sm_count = 0;         // the device's (StepBuffers reads it); 0 plans for one slot
};

// Each sequence's visible keys [begin, end) (masks leave one contiguous range).
struct VisibleRange {
  int begin = 0, end = 0;
};

struct SplitPlan {
  std::vector<WorkItem> work;     // longest first; every sequence has at least one item
  std::vector<SeqSplit> seqs;     // one per sequence
  int chunk_tiles = 0;            // the planned chunk size
  int partial_rows_per_head = 0;  // chunks of the sequences with more than one
  int max_chunks = 1;
};

// A sequence of `length` keys' visible keys under a mask for its q_len query tokens together
// (masks.cuh: the last token is the last key, and every mask leaves one contiguous range).
VisibleRange visible_range(int length, MaskKind mask, int window, int chunk, int q_len = 1);

SplitPlan build_split_plan(const std::vector<VisibleRange>& visible, const SplitPlanTarget& target,
                           const SplitPlanKnobs& knobs);

// Work items no plan for `batch` sequences exceeds, whatever their lengths: the fixed size of
// the device buffers (and the grid width) of a graph that replays with changing lengths.
int split_plan_capacity(int batch, const SplitPlanTarget& target, const SplitPlanKnobs& knobs);

}  // namespace mha
