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

#include "decode_params.cuh"
#include "split_code.h"

namespace mha {

// The plan's knobs, swept like the tile parameters.
struct SplitPlanKnobs {
  // Defaults: the one setting that cost least over the ragged suite on the H200 (1.006x the best
  // measured, geomean of 20 ragged problems; docs/performance.md, change 7).
  int blocks_per_sm = 2;     // the plan fills blocks_per_sm x SMs block slots
  int min_chunk_keys = 128;  // no chunk is planned shorter (each block has a fixed start cost)
};

constexpr int kMaxPlanBlocksPerSm = 64;
constexpr int kMaxPlanMinChunkKeys = 1 << 20;

int encode_cluster_split(int partitions);  // throws std::invalid_argument outside [2, 8]
// The partition count of a fixed or cluster split (requires !is_split_plan).
int split_partitions(int partitions);
int encode_split_plan(const SplitPlanKnobs& knobs);  // throws std::invalid_argument out of range
SplitPlanKnobs decode_split_plan(int partitions);   // requires is_split_plan
// "16" for fixed partitions, "plan1x256" for a plan of 1 block per SM and 256-key minimum chunks,
// "cluster4" for 4 partitions combined in a cluster.
std::string split_label(int partitions);

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
  std::vector<WorkItem> work;  // longest first; every sequence has at least one item
  std::vector<SeqSplit> seqs;  // one per sequence
  int chunk_tiles = 0;         // the planned chunk size
  int partial_rows_per_head = 0;  // chunks of the sequences with more than one
  int max_chunks = 1;
};

SplitPlan build_split_plan(const std::vector<VisibleRange>& visible, const SplitPlanTarget& target,
                           const SplitPlanKnobs& knobs);

// Work items no plan for `batch` sequences exceeds, whatever their lengths: the fixed size of
// the device buffers (and the grid width) of a graph that replays with changing lengths.
int split_plan_capacity(int batch, const SplitPlanTarget& target, const SplitPlanKnobs& knobs);

}  // namespace mha
