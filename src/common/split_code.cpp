// The split code's encoding and its text form, checked both ways.
#include "common/split_code.h"

#include <cctype>
#include <stdexcept>

#include "kernels/decode_params.cuh"  // kMaxClusterPartitions

namespace mha {

namespace {

constexpr int kPlanCodeBase = 1 << 21;  // > kMaxPlanMinChunkKeys: the knobs as one negative int

// A decimal integer of at most 9 digits, the whole of `digits`; -1 otherwise.
int whole_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 9) return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoi(digits);
}

}  // namespace

int encode_cluster_split(int partitions) {
  if (partitions < 2 || partitions > kMaxClusterPartitions)
    throw std::invalid_argument("a cluster split of " + std::to_string(partitions) +
                                " partitions is not in [2, " +
                                std::to_string(kMaxClusterPartitions) + "]");
  return kClusterSplitBase + partitions;
}

int split_partitions(int partitions) {
  if (is_split_plan(partitions))
    throw std::logic_error("split_partitions: a split plan has no fixed count");
  return split_count(partitions);
}

int encode_split_plan(const SplitPlanKnobs& k) {
  if (k.blocks_per_sm < 1 || k.blocks_per_sm > kMaxPlanBlocksPerSm)
    throw std::invalid_argument("plan blocks per SM " + std::to_string(k.blocks_per_sm) +
                                " is not in [1, " + std::to_string(kMaxPlanBlocksPerSm) + "]");
  if (k.min_chunk_keys < 1 || k.min_chunk_keys > kMaxPlanMinChunkKeys)
    throw std::invalid_argument("plan minimum chunk " + std::to_string(k.min_chunk_keys) +
                                " keys is not in [1, " + std::to_string(kMaxPlanMinChunkKeys) +
                                "]");
  return -(k.blocks_per_sm * kPlanCodeBase + k.min_chunk_keys);
}

SplitPlanKnobs decode_split_plan(int partitions) {
  const int code = -partitions;
  return {code / kPlanCodeBase, code % kPlanCodeBase};
}

std::string split_label(int partitions) {
  if (is_cluster_split(partitions)) return "cluster" + std::to_string(split_count(partitions));
  if (!is_split_plan(partitions)) return std::to_string(partitions);
  const SplitPlanKnobs k = decode_split_plan(partitions);
  return "plan" + std::to_string(k.blocks_per_sm) + "x" + std::to_string(k.min_chunk_keys);
}

int parse_split_label(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("split '" + text + "': " + why +
                                 " (expected a count such as 16, cluster4 or plan2x128)");
  };
  if (text.rfind("cluster", 0) == 0) {
    const int p = whole_number(text.substr(7));
    if (p < 0) throw bad("not a cluster size");
    try {
      return encode_cluster_split(p);
    } catch (const std::invalid_argument& e) {
      throw bad(e.what());
    }
  }
  if (text.rfind("plan", 0) == 0) {
    const size_t x = text.find('x', 4);
    if (x == std::string::npos) throw bad("a plan names its knobs");
    const int w = whole_number(text.substr(4, x - 4)), c = whole_number(text.substr(x + 1));
    if (w < 0 || c < 0) throw bad("a plan's knobs are two numbers");
    try {
      return encode_split_plan({w, c});
    } catch (const std::invalid_argument& e) {
      throw bad(e.what());
    }
  }
  const int p = whole_number(text);
  if (p < 1 || p >= kClusterSplitBase) throw bad("not a partition count in [1, 2^20)");
  return p;
}

}  // namespace mha
