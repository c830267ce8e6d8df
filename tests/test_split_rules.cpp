// Host tests for the field's split rules (split_rules.h) on hand-computed cases, the snapping to
// measured partition counts, and their cost as `select` reports it on a tiny synthetic report.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/split_rules.h"
#include "tests/test_support.h"

namespace mha {
namespace {

constexpr int kSmCount = 132;

SplitRuleInput input(int batch, int heads, int kv_heads, int keys,
                     const std::string& lengths = "") {
  SplitRuleInput in;
  in.shape.batch = batch;
  in.shape.heads = heads;
  in.shape.kv_heads = kv_heads;
  in.shape.keys = keys;
  in.shape.lengths = lengths;
  in.sm_count = kSmCount;
  in.tile = testing::llama_traits();
  in.tile.smem_bytes = 69632;  // 3 CTAs per SM: 233472 / (69632 + 1024)
  in.fitted = default_partition_rule();
  return in;
}

TEST(SplitRules, FlashAttentionWaveEfficiency) {
  // flash_api.cpp's own example: 48 blocks on 108 SMs take 2 splits (efficiency 0.89).
  EXPECT_EQ(flash_attn_num_splits(48, 108, 64, 128), 2);
  EXPECT_EQ(flash_attn_num_splits(100, 108, 64, 128), 1);  // >= 0.8 of the SMs: no split
}

TEST(SplitRules, FlashAttentionDecode) {
  // Batch 1, 8 KV heads, group 4 packed into M (one 64-row block), 1024 blocks of 128 keys,
  // 264 "SMs": efficiency 8s/264. s = 33 (1.0) is not eligible (32 blocks per split, as 32); the
  // best eligible is 32 (0.970), and the first eligible s with 8s/264 >= 0.85 * 0.970 is 28.
  EXPECT_EQ(flash_attn_split(input(1, 32, 8, 131072)), 28);
  // Group 1: 32 blocks; s = 41 reaches 0.994, and 7 splits give 224/264 = 0.848 >= 0.845.
  EXPECT_EQ(flash_attn_split(input(1, 32, 32, 131072)), 7);
  // A window turns the packing off: 32 query heads, as group 1.
  SplitRuleInput windowed = input(1, 32, 8, 131072);
  windowed.shape.mask = "window";
  EXPECT_EQ(flash_attn_split(windowed), 7);
  // Batch 64 x 8 KV heads = 512 blocks >= 0.8 * 264: one split.
  EXPECT_EQ(flash_attn_split(input(64, 32, 8, 131072)), 1);
  // 4096 keys: 32 blocks; only s in {1..8, 11, 16, 32} change the blocks per split; 32 wins.
  EXPECT_EQ(flash_attn_split(input(1, 32, 8, 4096)), 32);
}

TEST(SplitRules, Vllm512) {
  EXPECT_EQ(vllm_512_split(input(1, 32, 8, 8192)), 16);
  EXPECT_EQ(vllm_512_split(input(1, 32, 8, 8193)), 17);
  EXPECT_EQ(vllm_512_split(input(1, 32, 8, 100)), 1);
  // The longest sequence sets P for the whole batch.
  EXPECT_EQ(vllm_512_split(input(2, 32, 8, 4096, "ragged4096-100")), 8);
}

TEST(SplitRules, FlashInferChunkSearch) {
  // 396 resident CTAs (3 per SM), 8 per chunk: at most 49 chunks; 131072 / 2675 -> 49.
  EXPECT_EQ(flashinfer_split(input(1, 32, 8, 131072)), 49);
  // 64 x 8 = 512 CTAs already fill 396: no split.
  EXPECT_EQ(flashinfer_split(input(64, 32, 8, 131072)), 1);
  // Short sequences: the 128-key floor on the chunk.
  EXPECT_EQ(flashinfer_split(input(1, 32, 8, 1024)), 8);
  // One CTA per SM (135168 bytes): 132 CTAs, 16 chunks. Ragged 1000, 100, 100 fits 10 chunks
  // at 128 keys, so P = 8; three sequences of 1000 need chunks of 200 keys, so P = 5.
  SplitRuleInput ragged = input(3, 32, 8, 1000, "ragged1000-100-100");
  ragged.tile.smem_bytes = 135168;
  EXPECT_EQ(flashinfer_split(ragged), 8);
  SplitRuleInput uniform = input(3, 32, 8, 1000);
  uniform.tile.smem_bytes = 135168;
  EXPECT_EQ(flashinfer_split(uniform), 5);
  // Pages of 16 keys: the floor is 8 pages (128 keys) all the same.
  SplitRuleInput paged = input(1, 32, 8, 1024);
  paged.shape.page_size = 16;
  EXPECT_EQ(flashinfer_split(paged), 8);
}

TEST(SplitRules, SeedModularHeuristic) {
  EXPECT_EQ(seed_split(input(1, 32, 8, 131072)), 16);   // 132 / 8 = 16
  EXPECT_EQ(seed_split(input(8, 32, 8, 131072)), 2);    // 132 / 64 = 2
  EXPECT_EQ(seed_split(input(1, 32, 8, 1536)), 4);      // min(16, 3) rounded up to 4
  EXPECT_EQ(seed_split(input(1, 32, 32, 131072)), 4);   // 132 / 32 = 4
  EXPECT_EQ(seed_split(input(1, 32, 8, 512)), 1);       // not past 512 keys
  EXPECT_EQ(seed_split(input(1, 128, 8, 131072)), 1);   // group 16 > 8
  EXPECT_EQ(seed_split(input(256, 32, 8, 131072)), 1);  // no SM per unit left
}

TEST(SplitRules, FittedIsSelectsRule) {
  const SplitRuleInput in = input(2, 32, 8, 4096);
  EXPECT_EQ(fitted_split(in), auto_partitions(in.fitted, kSmCount, 16, 4096));
  ASSERT_EQ(split_rules().size(), 5u);
  EXPECT_STREQ(split_rules().front().name, "fitted");
}

TEST(SplitRules, SequenceLengths) {
  bool is_known = false;
  EXPECT_EQ(sequence_lengths(input(3, 32, 8, 64).shape, &is_known), (std::vector<int>{64, 64, 64}));
  EXPECT_TRUE(is_known);
  EXPECT_EQ(sequence_lengths(input(2, 32, 8, 7, "ragged5-7").shape, &is_known),
            (std::vector<int>{5, 7}));
  EXPECT_TRUE(is_known);
  EXPECT_EQ(sequence_lengths(input(2, 32, 8, 9, "ragged2x9").shape, &is_known),
            (std::vector<int>{9, 9}));
  EXPECT_FALSE(is_known);
  // A report that carries every length (ragged_lengths) needs no name to parse.
  SplitRuleInput long_list = input(2, 32, 8, 9, "ragged2x9");
  long_list.shape.ragged_lengths = {3, 9};
  EXPECT_EQ(sequence_lengths(long_list.shape, &is_known), (std::vector<int>{3, 9}));
  EXPECT_TRUE(is_known);
}

TEST(SplitRules, SnapsToTheNearestMeasuredWithinAFactorTwo) {
  const std::map<int, double> times = {{1, 10}, {2, 20}, {4, 40}, {8, 80}};
  SnappedTime t = snap_partitions(times, 8);
  EXPECT_EQ(t.partitions, 8);
  EXPECT_TRUE(t.is_measured);
  EXPECT_FALSE(t.is_snapped);
  t = snap_partitions(times, 3);  // log2 3 = 1.58: nearer 4
  EXPECT_EQ(t.partitions, 4);
  EXPECT_DOUBLE_EQ(t.time_us, 40);
  EXPECT_TRUE(t.is_snapped);
  t = snap_partitions(times, 16);  // exactly a factor 2 away: still measured
  EXPECT_EQ(t.partitions, 8);
  EXPECT_TRUE(t.is_measured);
  EXPECT_TRUE(t.is_snapped);
  t = snap_partitions(times, 17);  // more than a factor 2
  EXPECT_FALSE(t.is_measured);
  EXPECT_FALSE(t.is_snapped);
  t = snap_partitions({{2, 1}, {8, 2}}, 4);  // a tie goes to the smaller
  EXPECT_EQ(t.partitions, 2);
}

ResultRow row(int keys, int partitions, double us) {
  ResultRow r;
  r.traits = testing::llama_traits();
  r.kernel = "decode_bf16_d128_g4_contig_null_bm16_bn64_s4";
  r.problem.name = "b1_h32_kv8_d128_n" + std::to_string(keys);
  r.problem.batch = 1;
  r.problem.heads = 32;
  r.problem.kv_heads = 8;
  r.problem.keys = keys;
  r.partitions = partitions;
  r.status = Status::kPassed;
  r.time = timing_stats(us, us, us, 0, 10);
  return r;
}

// The name as a pointer: a std::string parameter bound to a literal's temporary, with a
// reference returned, is what g++ 13's -Wdangling-reference warns about.
const SplitRuleCost& rule_cost(const Selection& s, const char* name) {
  for (const SplitRuleCost& c : s.split_rules)
    if (c.rule == name) return c;
  throw std::runtime_error(std::string("no rule ") + name);
}

TEST(SplitRules, CostInSelect) {
  Report r;
  r.meta.gpu_name = "NVIDIA H200";
  r.meta.sm_count = kSmCount;
  // 4096 keys: best at P = 8 (30 us). 65536 keys: only P = 1 and 2 measured.
  for (const auto& [p, us] : std::map<int, double>{{1, 100}, {2, 60}, {4, 40}, {8, 30}, {16, 35}})
    r.rows.push_back(row(4096, p, us));
  r.rows.push_back(row(65536, 1, 500));
  r.rows.push_back(row(65536, 2, 400));
  const Selection s = select_defaults({r}, {"synthetic"});
  ASSERT_EQ(s.split_rules.size(), split_rules().size());

  // vLLM: 8 partitions at 4096 (cost 1); 128 at 65536, nothing within a factor 2.
  const SplitRuleCost& vllm = rule_cost(s, "vllm_512");
  EXPECT_EQ(vllm.problems, 1);
  EXPECT_EQ(vllm.not_measured, 1);
  EXPECT_EQ(vllm.snapped, 0);
  EXPECT_DOUBLE_EQ(vllm.geomean_cost, 1.0);
  ASSERT_EQ(vllm.details.size(), 2u);
  EXPECT_EQ(vllm.details[1].partitions, 128);
  EXPECT_FALSE(vllm.details[1].is_measured);
  EXPECT_EQ(vllm.details[1].cost, 0);

  // FlashAttention: 32 at 4096, snapped to 16 (35 / 30); 29 at 65536, not measured.
  const SplitRuleCost& fa = rule_cost(s, "flash_attn");
  ASSERT_EQ(fa.details.size(), 2u);
  EXPECT_EQ(fa.details[0].partitions, 32);
  EXPECT_EQ(fa.details[0].measured_partitions, 16);
  EXPECT_TRUE(fa.details[0].is_snapped);
  EXPECT_DOUBLE_EQ(fa.details[0].cost, 35.0 / 30.0);
  EXPECT_EQ(fa.details[1].partitions, 29);
  EXPECT_FALSE(fa.details[1].is_measured);
  EXPECT_EQ(fa.snapped, 1);
  EXPECT_EQ(fa.not_measured, 1);
  // Every measured detail's cost is its time over the problem's best.
  for (const SplitRuleCost& c : s.split_rules) {
    double worst = 0;
    for (const SplitRuleProblem& d : c.details) {
      if (!d.is_measured) continue;
      const bool is_short = d.problem == "b1_h32_kv8_d128_n4096";
      EXPECT_GE(d.cost, 1.0 - 1e-12) << c.rule << " " << d.problem;
      EXPECT_LE(d.cost, is_short ? 100.0 / 30 : 500.0 / 400) << c.rule << " " << d.problem;
      worst = std::max(worst, d.cost);
    }
    EXPECT_DOUBLE_EQ(c.worst_cost, worst) << c.rule;
    EXPECT_EQ(c.problems + c.not_measured, 2) << c.rule;
  }
}

}  // namespace
}  // namespace mha
