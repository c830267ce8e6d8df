// The balanced split plan on the host: chunks within the block budget, whole tiles, every visible
// tile covered exactly once, longest items first, the partial layout, capacity and the knobs'
// encoding on the partitions axis.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "api/split_plan.h"
#include "common/errors.h"
#include "problems/problem.h"

namespace mha {
namespace {

std::vector<VisibleRange> full(const std::vector<int>& lengths) {
  std::vector<VisibleRange> r;
  for (int n : lengths) r.push_back({0, n});
  return r;
}

// Every visible tile of every sequence is in exactly one item of that sequence, the chunks of
// a sequence are numbered 0..chunks-1, and multi-chunk sequences own disjoint partial rows.
void expect_valid(const SplitPlan& plan, const std::vector<VisibleRange>& visible, int tile_keys) {
  ASSERT_EQ(plan.seqs.size(), visible.size());
  std::vector<int> covered(visible.size(), 0);
  std::vector<std::vector<int>> chunk_ids(visible.size());
  for (const WorkItem& w : plan.work) {
    ASSERT_GE(w.seq, 0);
    ASSERT_LT(w.seq, static_cast<int>(visible.size()));
    EXPECT_LE(w.tile_begin, w.tile_end);
    covered[w.seq] += w.tile_end - w.tile_begin;
    EXPECT_EQ(w.chunks, plan.seqs[w.seq].chunks);
    EXPECT_EQ(w.first_partial, plan.seqs[w.seq].first_partial);
    EXPECT_EQ(w.seq_len, visible[w.seq].end);
    chunk_ids[w.seq].push_back(w.chunk);
    if (w.tile_end > w.tile_begin) {
      EXPECT_GE(w.tile_begin, visible[w.seq].begin / tile_keys);
      EXPECT_LE(w.tile_end * tile_keys, visible[w.seq].end + tile_keys - 1);
    }
  }
  int next_partial = 0;
  for (size_t b = 0; b < visible.size(); ++b) {
    const int n = visible[b].end, lo = visible[b].begin;
    const int tiles = n > lo ? (n + tile_keys - 1) / tile_keys - lo / tile_keys : 0;
    EXPECT_EQ(covered[b], tiles) << "sequence " << b;
    std::sort(chunk_ids[b].begin(), chunk_ids[b].end());
    std::vector<int> expected(plan.seqs[b].chunks);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(chunk_ids[b], expected) << "sequence " << b;
    if (plan.seqs[b].chunks > 1) {
      EXPECT_EQ(plan.seqs[b].first_partial, next_partial);
      next_partial += plan.seqs[b].chunks;
    }
  }
  EXPECT_EQ(plan.partial_rows_per_head, next_partial);
  for (size_t i = 1; i < plan.work.size(); ++i)
    EXPECT_GE(plan.work[i - 1].tile_end - plan.work[i - 1].tile_begin,
              plan.work[i].tile_end - plan.work[i].tile_begin)
        << "longest first";
}

TEST(SplitPlan, OneLongSequenceGetsTheBlocksAndShortOnesOneChunkEach) {
  const SplitPlanTarget target{64, 8, 132};  // 8 KV heads: 16.5 items fill 132 SMs once
  std::vector<int> lengths(31, 300);
  lengths.push_back(65536);
  const auto visible = full(lengths);
  const SplitPlan plan = build_split_plan(visible, target, {1, 256});
  expect_valid(plan, visible, 64);
  EXPECT_LE(static_cast<int>(plan.work.size()), split_plan_capacity(32, target, {1, 256}));
  EXPECT_GE(plan.seqs.back().chunks, 8) << "the long sequence spreads over most SMs";
  EXPECT_EQ(plan.seqs.back().chunks, static_cast<int>(plan.work.size()) - 31);
  for (int b = 0; b < 31; ++b) EXPECT_EQ(plan.seqs[b].chunks, 1);
  EXPECT_EQ(plan.work.front().seq, 31) << "its chunks start first";
}

TEST(SplitPlan, UniformBatchFillsWholeWaves) {
  // Batch 1, 131072 keys, 8 KV heads, BN 64: 16 chunks (128 blocks) or 33 (264) fill the 132
  // SMs; 17 would leave a second wave almost empty.
  for (int per_sm : {1, 2}) {
    const SplitPlan plan = build_split_plan(full({131072}), {64, 8, 132}, {per_sm, 256});
    const int blocks = plan.seqs[0].chunks * 8, wave = 132 * per_sm;
    const int waves = (blocks + wave - 1) / wave;
    EXPECT_GE(blocks, 0.95 * waves * wave)
        << per_sm << " per SM: " << plan.seqs[0].chunks << " chunks";
  }
}

TEST(SplitPlan, TheMinimumChunkBoundsHowFinelyShortSequencesSplit) {
  const SplitPlan plan = build_split_plan(full({512}), {64, 8, 132}, {1, 256});
  EXPECT_EQ(plan.chunk_tiles, 4);
  EXPECT_EQ(plan.seqs[0].chunks, 2);
  EXPECT_EQ(build_split_plan(full({512}), {64, 8, 132}, {1, 1}).seqs[0].chunks, 8);
}

TEST(SplitPlan, MoreSequencesThanTheBudgetGiveOneChunkEach) {
  std::vector<int> lengths(300, 1000);
  lengths[7] = 9000;
  const auto visible = full(lengths);
  const SplitPlan plan = build_split_plan(visible, {64, 8, 132}, {1, 256});
  expect_valid(plan, visible, 64);
  EXPECT_EQ(plan.work.size(), lengths.size());
  EXPECT_EQ(plan.partial_rows_per_head, 0);
  EXPECT_LE(static_cast<int>(plan.work.size()), split_plan_capacity(300, {64, 8, 132}, {1, 256}));
}

TEST(SplitPlan, WindowsCountOnlyTheVisibleTiles) {
  // A window of 128 at 100k keys: 2 or 3 visible tiles, not 1563.
  const std::vector<VisibleRange> visible = {{100000 - 128, 100000}, {0, 50}};
  const SplitPlan plan = build_split_plan(visible, {64, 8, 132}, {1, 64});
  expect_valid(plan, visible, 64);
  EXPECT_LE(plan.seqs[0].chunks, 3);
  EXPECT_EQ(plan.work.front().tile_begin, (100000 - 128) / 64);
}

TEST(SplitPlan, EmptySequencesStillGetAnItemThatWritesTheirOutput) {
  const std::vector<VisibleRange> visible = {{0, 0}, {0, 5000}};
  const SplitPlan plan = build_split_plan(visible, {64, 2, 132}, {1, 64});
  expect_valid(plan, visible, 64);
  EXPECT_EQ(plan.seqs[0].chunks, 1);
}

TEST(SplitPlan, NoLengthsNeedMoreItemsThanTheCapacity) {
  const SplitPlanTarget target{64, 4, 132};
  const SplitPlanKnobs knobs{2, 128};
  const int capacity = split_plan_capacity(5, target, knobs);
  for (const std::vector<int>& lengths : {std::vector<int>{1, 1, 1, 1, 1},
                                          {131072, 1, 1, 1, 1},
                                          {131072, 131072, 131072, 131072, 131072},
                                          {64, 65, 127, 128, 129},
                                          {100000, 3, 70000, 9, 40000}})
    EXPECT_LE(static_cast<int>(build_split_plan(full(lengths), target, knobs).work.size()),
              capacity);
}

TEST(SplitPlan, KnobsRoundTripThroughThePartitionsAxis) {
  const int code = encode_split_plan({2, 512});
  EXPECT_TRUE(is_split_plan(code));
  EXPECT_FALSE(is_split_plan(1));
  EXPECT_EQ(decode_split_plan(code).blocks_per_sm, 2);
  EXPECT_EQ(decode_split_plan(code).min_chunk_keys, 512);
  EXPECT_EQ(split_label(code), "plan2x512");
  EXPECT_EQ(split_label(16), "16");
  EXPECT_THROW(encode_split_plan({0, 256}), std::invalid_argument);
  EXPECT_THROW(encode_split_plan({1, 0}), std::invalid_argument);
}

TEST(SplitPlan, ClusterSplitsAreAThirdKindOnThePartitionsAxis) {
  const int code = encode_cluster_split(4);
  EXPECT_TRUE(is_cluster_split(code));
  EXPECT_FALSE(is_split_plan(code));
  EXPECT_FALSE(is_cluster_split(4));
  EXPECT_FALSE(is_cluster_split(encode_split_plan({2, 128})));
  EXPECT_EQ(split_partitions(code), 4);
  EXPECT_EQ(split_partitions(16), 16);
  EXPECT_EQ(split_label(code), "cluster4");
  EXPECT_THROW(encode_cluster_split(1), std::invalid_argument);
  EXPECT_THROW(encode_cluster_split(kMaxClusterPartitions + 1), std::invalid_argument);
  EXPECT_THROW(split_partitions(encode_split_plan({2, 128})), std::logic_error);
  const std::vector<int> parts =
      spec_partitions(parse_problem_spec("partitions=1:8:cluster2:cluster8"));
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(split_label(parts[2]), "cluster2");
  EXPECT_EQ(split_label(parts[3]), "cluster8");
  // A cluster split's partials stay on chip: the step moves the bytes of an unsplit one.
  Problem p;
  p.shape.batch = 1;
  p.shape.keys = 512;
  p.lengths = {512};
  EXPECT_DOUBLE_EQ(step_bytes(p, code), step_bytes(p, 1));
  EXPECT_GT(step_bytes(p, 4), step_bytes(p, 1));
}

TEST(SplitPlan, BadClusterSplitsNameTheWordAndTheRange) {
  for (const char* bad : {"cluster1", "cluster9", "cluster", "clusterx", "cluster4x"}) {
    try {
      parse_problem_spec(std::string("partitions=") + bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cluster2 .. cluster8"), std::string::npos) << e.what();
    }
  }
}

TEST(SplitPlan, SpecsAddOnePlanPerKnobCombination) {
  const ProblemSpec spec =
      parse_problem_spec("partitions=1:16:plan,plan_blocks_per_sm=1:2,plan_min_chunk=256:1024");
  const std::vector<int> parts = spec_partitions(spec);
  ASSERT_EQ(parts.size(), 6u);
  EXPECT_EQ(parts[0], 1);
  EXPECT_EQ(parts[1], 16);
  EXPECT_EQ(split_label(parts[2]), "plan1x256");
  EXPECT_EQ(split_label(parts[5]), "plan2x1024");
  EXPECT_EQ(split_label(spec_partitions(parse_problem_spec("partitions=plan"))[0]), "plan2x128");
}

// Planning runs on the host before each step's graph replay, so it must cost little next to a
// step: a 256-sequence log-spread batch plans in well under a millisecond (printed for the notes).
TEST(SplitPlan, PlanningABigRaggedBatchIsCheap) {
  std::vector<int> lengths;
  for (int b = 0; b < 256; ++b) lengths.push_back(64 + (b * 7919) % 32768);
  const auto visible = full(lengths);
  const SplitPlanTarget target{64, 8, 132};
  const auto start = std::chrono::steady_clock::now();
  const int reps = 20;
  size_t items = 0;
  for (int i = 0; i < reps; ++i) items += build_split_plan(visible, target, {2, 128}).work.size();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      reps;
  std::printf("build_split_plan, 256 sequences, 8 KV heads: %.1f us per plan, %zu items\n", us,
              items / reps);
  EXPECT_LT(us, 2000.0);
}

}  // namespace
}  // namespace mha
