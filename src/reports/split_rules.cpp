// The field's split-KV rules written for our kernel, from reading each library's planner (no code
// taken): FlashAttention-2 csrc/flash_attn/flash_api.cpp (num_splits_heuristic,
// set_params_splitkv), vLLM paged attention v2, FlashInfer include/flashinfer/attention/
// scheduler.cuh (PartitionPagedKVCacheBinarySearchMinNumPagePerBatch), Modular MAX nn/mha.mojo.
#include "reports/split_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace mha {

namespace {

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

// H100/H200 (sm_90): what bounds the CTAs resident on one SM.
constexpr int kThreadsPerSm = 2048;
constexpr int kBlocksPerSm = 32;
constexpr int kSmemPerSmBytes = 228 * 1024;
constexpr int kSmemReservedPerBlockBytes = 1024;  // the runtime's per-CTA reservation

// CTAs of `tile` one SM holds at once, from threads and shared memory (the report has no register
// count; at 128-256 threads and 64-200 KB of shared memory, shared memory is the bound).
int resident_blocks_per_sm(const KernelTraits& tile) {
  int blocks = kBlocksPerSm;
  if (tile.threads > 0) blocks = std::min(blocks, kThreadsPerSm / tile.threads);
  if (tile.smem_bytes > 0)
    blocks = std::min(blocks, kSmemPerSmBytes / (tile.smem_bytes + kSmemReservedPerBlockBytes));
  return std::max(blocks, 1);
}

int next_power_of_two(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

}  // namespace

std::vector<int> sequence_lengths(const ProblemShape& shape, bool* is_known) {
  const int batch = std::max(shape.batch, 1);
  if (is_known) *is_known = true;
  if (!shape.ragged_lengths.empty()) return shape.ragged_lengths;
  const std::string prefix = "ragged";
  if (shape.lengths.compare(0, prefix.size(), prefix) != 0)
    return std::vector<int>(batch, shape.keys);
  const std::string list = shape.lengths.substr(prefix.size());
  std::vector<int> out;
  std::stringstream in(list);
  std::string item;
  bool is_list = !list.empty();
  while (is_list && std::getline(in, item, '-')) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 0) {
      is_list = false;
      break;
    }
    out.push_back(static_cast<int>(n));
  }
  if (is_list) return out;
  if (is_known) *is_known = false;
  return std::vector<int>(batch, shape.keys);
}

int fitted_split(const SplitRuleInput& in) {
  return auto_partitions(
      in.fitted, in.sm_count,
      rule_work_units(in.shape.batch * in.shape.kv_heads,
                      in.shape.heads / std::max(1, in.shape.kv_heads) * in.shape.q_len, in.tile.bm),
      in.shape.keys);
}

int flash_attn_num_splits(int batch_heads_mblocks, int num_sms, int num_n_blocks, int max_splits) {
  // Enough blocks to nearly fill one wave: splitting only adds partial-result traffic.
  if (batch_heads_mblocks >= 0.8 * num_sms) return 1;
  const int limit = std::min({max_splits, num_sms, num_n_blocks});
  // A split count that gives the same blocks per split as one fewer splits runs as that one.
  auto is_eligible = [&](int s) {
    return s == 1 || ceil_div(num_n_blocks, s) != ceil_div(num_n_blocks, s - 1);
  };
  auto efficiency = [&](int s) {
    const double waves = static_cast<double>(batch_heads_mblocks) * s / num_sms;
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (int s = 1; s <= limit; ++s)
    if (is_eligible(s)) best = std::max(best, efficiency(s));
  // Fewest splits within 85% of the best wave efficiency: more splits cost HBM round trips.
  for (int s = 1; s <= limit; ++s)
    if (is_eligible(s) && efficiency(s) >= 0.85 * best) return s;
  return 1;
}

int flash_attn_split(const SplitRuleInput& in) {
  const ProblemShape& p = in.shape;
  const int group = p.kv_heads > 0 ? p.heads / p.kv_heads : 1;
  // FA2 packs a KV head's query heads into the M dimension for a one-token decode (seqlen_q =
  // group, heads = kv_heads), except under a local window.
  const bool is_packed = group > 1 && p.mask != "window";
  const int heads = is_packed ? p.kv_heads : p.heads;
  const int rows_q = is_packed ? group : 1;
  // Split-KV kernel blocks for d <= 128: kBlockM 64, kBlockN 128 (256 at d <= 64, 64 above 128).
  const int block_m = 64;
  const int block_n = p.depth <= 64 ? 256 : (p.depth <= 128 ? 128 : 64);
  const int n_blocks = ceil_div(std::max(p.keys, 1), block_n);
  const int m_blocks = ceil_div(rows_q, block_m);
  // FA2 passes twice the SM count: its 128-thread blocks run two per SM.
  return flash_attn_num_splits(p.batch * heads * m_blocks, 2 * in.sm_count, n_blocks, 128);
}

int vllm_512_split(const SplitRuleInput& in) {
  // vLLM splits each sequence by its own length; our kernel gives every sequence the same P, so
  // the longest sequence (keys) sets it.
  return std::max(1, ceil_div(in.shape.keys, 512));
}

int flashinfer_split(const SplitRuleInput& in) {
  const ProblemShape& p = in.shape;
  const int page = p.page_size > 0 ? p.page_size : 1;  // contiguous K/V: one key per page
  const int group = p.kv_heads > 0 ? p.heads / p.kv_heads : 1;
  // CTAs per sequence chunk: one per KV head in FlashInfer; ours needs ceil(group / BM).
  const int ctas_per_chunk = p.kv_heads * ceil_div(group, std::max(in.tile.bm, 1));
  const long long max_ctas =
      static_cast<long long>(resident_blocks_per_sm(in.tile)) * std::max(in.sm_count, 1);
  const std::vector<int> lengths = sequence_lengths(p);
  if (static_cast<long long>(lengths.size()) * ctas_per_chunk >= max_ctas) return 1;
  std::vector<int> pages;
  int max_pages = 1;
  for (int n : lengths) {
    pages.push_back(std::max(ceil_div(n, page), 1));
    max_pages = std::max(max_pages, pages.back());
  }
  // The smallest chunk (at least 128 keys' worth of pages) whose chunks over the whole batch fit
  // in one wave of resident CTAs; the count of chunks falls as the chunk grows, so bisect.
  int low = std::max(128 / page, 1), high = max_pages;
  while (low < high) {
    const int mid = low + (high - low) / 2;
    long long chunks = 0;
    for (int n : pages) chunks += ceil_div(n, mid);
    if (chunks * ctas_per_chunk > max_ctas)
      low = mid + 1;
    else
      high = mid;
  }
  // FlashInfer chunks each sequence separately; our kernel splits all alike, so the longest
  // sequence's chunk count is P.
  return std::max(1, ceil_div(max_pages, low));
}

int seed_split(const SplitRuleInput& in) {
  // The seed (mha_decoding_single_batch_pipelined) takes num_partitions as given and states no
  // rule; its caller in Modular MAX (get_mha_decoding_num_partitions, NVIDIA branch) uses: past
  // 512 keys and for groups up to 8, the SMs per (batch, KV head) and keys / 512, the smaller,
  // rounded up to a power of two, at most 32; else 1.
  const ProblemShape& p = in.shape;
  const int group = p.kv_heads > 0 ? p.heads / p.kv_heads : 1;
  if (p.keys <= 512 || group > 8) return 1;
  const int per_unit = in.sm_count / std::max(p.batch * p.kv_heads, 1);
  return std::min(next_power_of_two(std::min(per_unit, p.keys / 512)), 32);
}

const std::vector<SplitRule>& split_rules() {
  static const std::vector<SplitRule> rules = {{"fitted", fitted_split},
                                               {"flash_attn", flash_attn_split},
                                               {"vllm_512", vllm_512_split},
                                               {"flashinfer", flashinfer_split},
                                               {"seed", seed_split}};
  return rules;
}

SnappedTime snap_partitions(const std::map<int, double>& time_by_partitions, int p) {
  SnappedTime out;
  double best_dist = std::numeric_limits<double>::infinity();
  // Ascending order and a strict comparison: a tie goes to the smaller count.
  for (const auto& [parts, us] : time_by_partitions) {
    const double dist = std::fabs(std::log2(static_cast<double>(parts)) - std::log2(p));
    if (dist < best_dist - 1e-12) {
      best_dist = dist;
      out.partitions = parts;
      out.time_us = us;
    }
  }
  out.is_measured = out.time_us >= 0 && best_dist <= 1 + 1e-12;
  out.is_snapped = out.is_measured && out.partitions != p;
  return out;
}

}  // namespace mha
