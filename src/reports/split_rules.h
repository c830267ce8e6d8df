// The split-KV rules other libraries use, as named rules mapping a decode problem to the partition
// count P of our kernel, so that `mha-tune select` can price them on the same measurements as its
// own fitted rule; and the snapping of a rule's P to the partition counts a sweep measured.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result_row.h"
#include "registry/kernel_registry.h"
#include "reports/select.h"

namespace mha {

// Everything a rule may look at: the problem, the GPU, the tile that would run it (FlashInfer's
// rule asks how many CTAs of it fit at once) and select's fitted rule.
struct SplitRuleInput {
  ProblemShape shape;
  int sm_count = 0;
  KernelTraits tile;
  PartitionRule fitted;
};

// The sequence lengths of the batch: `batch` copies of keys when uniform, the list from
// "ragged<a>-<b>-..." when ragged. A report that kept only "ragged<n>x<max>" (long lists are not
// written out) gives n copies of max and is_known false: an upper bound on each length.
std::vector<int> sequence_lengths(const ProblemShape& shape, bool* is_known = nullptr);

// Each returns P >= 1.
int fitted_split(const SplitRuleInput& in);      // select's PartitionRule (auto_partitions)
int flash_attn_split(const SplitRuleInput& in);  // FlashAttention-2 num_splits_heuristic
int vllm_512_split(const SplitRuleInput& in);    // vLLM paged attention v2: 512-key partitions
int flashinfer_split(const SplitRuleInput& in);  // FlashInfer batch-decode chunk-size search
int seed_split(const SplitRuleInput& in);        // the seed's API family (Modular MAX mha.mojo)

// FlashAttention-2's wave-efficiency search, on its own inputs (exposed for tests).
int flash_attn_num_splits(int batch_heads_mblocks, int num_sms, int num_n_blocks, int max_splits);

struct SplitRule {
  const char* name;
  int (*partitions)(const SplitRuleInput&);
};
// fitted first (ours), then the field's rules in a fixed order.
const std::vector<SplitRule>& split_rules();

// The measured partition count nearest p (in octaves, ties to the smaller). is_measured: one was
// within a factor 2 of p; is_snapped: it differs from p.
struct SnappedTime {
  int partitions = 0;
  double time_us = -1;
  bool is_measured = false;
  bool is_snapped = false;
};
SnappedTime snap_partitions(const std::map<int, double>& time_by_partitions, int p);

}  // namespace mha
