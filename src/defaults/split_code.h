// A split as one int, the encoding reports, journals and the defaults table carry: a count P >= 1
// (equal partitions and a reduce), a balanced split plan (< 0; src/sweep/split_plan.h holds its
// knobs) or P partitions combined in a thread-block cluster (kClusterSplitBase + P). Written once
// here for the planner, the reports and the library.
#pragma once

namespace mha {

constexpr int kClusterSplitBase = 1 << 20;  // above every fixed partition count

inline bool is_split_plan(int partitions) { return partitions < 0; }
inline bool is_cluster_split(int partitions) { return partitions > kClusterSplitBase; }
// The partition count of a fixed or cluster split (a plan has none: 0).
inline int split_count(int partitions) {
  return is_split_plan(partitions)      ? 0
         : is_cluster_split(partitions) ? partitions - kClusterSplitBase
                                        : partitions;
}

}  // namespace mha
