// A split as one int, the encoding points, reports, journals and the defaults table carry, and its
// one text form: a count P >= 1 ("16": equal partitions and a reduce), a balanced split plan
// (< 0: -(blocks_per_sm * 2^21 + min_chunk_keys), "plan2x128"; src/api/split_plan.h plans it)
// or P partitions combined in a thread-block cluster (kClusterSplitBase + P, "cluster4"). Written
// once here for the planner, the reports and the library.
#pragma once

#include <string>

namespace mha {

constexpr int kClusterSplitBase = 1 << 20;  // above every fixed partition count
constexpr int kMaxPlanBlocksPerSm = 64;
constexpr int kMaxPlanMinChunkKeys = 1 << 20;

// The plan's knobs, swept like the tile parameters.
struct SplitPlanKnobs {
  // Defaults: the one setting that cost least over the ragged suite on the H200 (1.006x the best
  // measured, geomean of 20 ragged problems; docs/performance.md, "the balanced split plan").
  int blocks_per_sm = 2;     // the plan fills blocks_per_sm x SMs block slots
  int min_chunk_keys = 128;  // no chunk is planned shorter (each block has a fixed start cost)
};

inline bool is_split_plan(int partitions) { return partitions < 0; }
inline bool is_cluster_split(int partitions) { return partitions > kClusterSplitBase; }
// The partition count of a fixed or cluster split (a plan has none: 0).
inline int split_count(int partitions) {
  return is_split_plan(partitions)      ? 0
         : is_cluster_split(partitions) ? partitions - kClusterSplitBase
                                        : partitions;
}

int encode_cluster_split(int partitions);  // throws std::invalid_argument outside [2, 8]
// The partition count of a fixed or cluster split (throws std::logic_error for a plan).
int split_partitions(int partitions);
int encode_split_plan(const SplitPlanKnobs& knobs);  // throws std::invalid_argument out of range
SplitPlanKnobs decode_split_plan(int partitions);    // requires is_split_plan

// "16", "plan1x256", "cluster4"; and back. parse_split_label throws std::invalid_argument naming
// the text for anything else (a count outside [1, 2^20), knobs or a cluster size out of range).
std::string split_label(int partitions);
int parse_split_label(const std::string& text);

}  // namespace mha
