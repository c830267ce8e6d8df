// The partition rule: the split count for a shape no measured entry serves. Its form and its
// unfitted default live here, below every stage, since the planner, the reports and the library
// all apply it; select fits it (reports/partition_fit.cpp) and the defaults table carries it.
#pragma once

namespace mha {

// Partitions for a shape no entry serves (its family not measured, or its kernel not compiled):
//   p = ceil(alpha * sm_count / work_units), at most floor(keys / min_keys_per_partition),
//   clamped to [1, max_partitions]; work_units = batch * kv_heads * row blocks per KV head.
struct PartitionRule {
  double alpha = 2.0;
  int min_keys_per_partition = 256;
  int max_partitions = 64;
  bool is_fitted = false;
};
int auto_partitions(const PartitionRule& rule, int sm_count, int work_units, int keys);

// Unfitted default, for `sweep --partitions auto` before any select has run: about two blocks
// per SM (one block per SM does not keep enough bytes in flight for a memory-bound decode step),
// each partition streaming at least 256 keys (several BN tiles, so the fixed per-partition cost of
// loading q, writing partials and reducing them stays small), at most 64 partitions.
inline PartitionRule default_partition_rule() { return PartitionRule{}; }
// The blocks one partition launches: batch x kv_heads (work_units) times the row blocks of each
// KV head (its rows: the group, times q_len with several query tokens; more rows than the tile's
// BM take several). What the rule must count.
inline int rule_work_units(int work_units, int rows_per_kv_head, int bm) {
  return work_units * ((rows_per_kv_head + bm - 1) / (bm > 0 ? bm : 1));
}

}  // namespace mha
