// Host tests for `mha-tune select`: per-bucket choice by geometric mean, the partition rule and
// its fit, the cost report, the held-out evaluation and the defaults table the library loads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>

#include "api/split_plan.h"
#include "common/errors.h"
#include "defaults/defaults_table.h"
#include "reports/select.h"
#include "reports/select_decisions.h"
#include "tests/test_support.h"

namespace mha {
namespace {

constexpr int kSmCount = 132;

std::filesystem::path temp_dir() { return testing::temp_dir("test_select"); }

KernelTraits tile(int bn, int stages) {
  KernelTraits t = testing::llama_traits();
  t.bn = bn;
  t.stages = stages;
  return t;
}

ResultRow make_row(const KernelTraits& t, int batch, int keys, int partitions, double us) {
  ResultRow r;
  r.traits = t;
  r.kernel = "decode_bf16_d128_g4_contig_null_bm16_bn" + std::to_string(t.bn) + "_s" +
             std::to_string(t.stages);
  r.problem.name = "b" + std::to_string(batch) + "_h32_kv8_d128_n" + std::to_string(keys);
  r.problem.batch = batch;
  r.problem.heads = 32;
  r.problem.kv_heads = 8;
  r.problem.keys = keys;
  r.partitions = partitions;
  r.status = Status::kPassed;
  r.time = timing_stats(us, us, us, us * 0.01, 20);
  return r;
}

// The same row as a ragged batch (one 4,096-key sequence among three of 100), on cache `kv` when
// one is given (named apart).
ResultRow as_ragged(ResultRow row, const std::string& kv = "") {
  row.problem.name += kv.empty() ? "_ragged" : "_ragged_" + kv;
  if (!kv.empty()) row.problem.kv = kv;
  row.problem.lengths = "ragged4096-100-100-100";
  row.problem.ragged_lengths = {4096, 100, 100, 100};
  return row;
}

// A memory-bound model: the step streams wu * keys units at a rate that grows with the blocks in
// flight up to two per SM, plus a launch, plus a reduce launch when split. Tile bn32 is faster
// below 1024 keys, bn64 above.
double model_us(int bn, int work_units, int keys, int p) {
  const double blocks = std::min(work_units * p, 2 * kSmCount);
  const double tile_factor = keys < 1024 ? (bn == 32 ? 0.8 : 1.0) : (bn == 32 ? 1.2 : 1.0);
  return tile_factor * 0.05 * work_units * keys / blocks + 2.0 + (p > 1 ? 3.0 + 0.002 * p : 0);
}

Report synthetic_report() {
  Report r;
  r.meta.gpu_name = "NVIDIA H200";
  r.meta.sm_count = kSmCount;
  for (int batch : {1, 2, 4, 16}) {
    for (int keys : {512, 2048, 8192, 32768}) {
      for (int bn : {32, 64}) {
        for (int p : {1, 2, 4, 8, 16, 32}) {
          r.rows.push_back(make_row(tile(bn, bn == 32 ? 2 : 4), batch, keys, p,
                                    model_us(bn, batch * 8, keys, p)));
        }
      }
    }
  }
  return r;
}

TEST(Select, AutoPartitionsDefaultRule) {
  const PartitionRule rule = default_partition_rule();
  EXPECT_FALSE(rule.is_fitted);
  EXPECT_EQ(auto_partitions(rule, 132, 8, 4096), 16);      // 33 wanted, 16 by keys
  EXPECT_EQ(auto_partitions(rule, 132, 8, 1 << 20), 33);   // ceil(2 * 132 / 8)
  EXPECT_EQ(auto_partitions(rule, 132, 264, 1 << 20), 1);  // enough blocks already
  EXPECT_EQ(auto_partitions(rule, 132, 1, 1 << 20), 64);   // max_partitions
  EXPECT_EQ(auto_partitions(rule, 132, 8, 100), 1);        // too few keys to split
  EXPECT_EQ(auto_partitions(rule, 0, 8, 4096), 1);
  EXPECT_EQ(length_log2(4096), 12);
  EXPECT_EQ(length_log2(8191), 12);
  EXPECT_EQ(length_log2(1), 0);
}

TEST(Select, TheRuleCountsEveryRowBlockOfAKvHead) {
  EXPECT_EQ(rule_work_units(8, 4, 16), 8);   // the group fits one row block
  EXPECT_EQ(rule_work_units(1, 64, 16), 4);  // MQA with BM 16: four blocks per KV head
  EXPECT_EQ(rule_work_units(1, 64, 64), 1);
  EXPECT_EQ(rule_work_units(2, 7, 16), 2);
  PartitionRule rule = default_partition_rule();
  rule.max_partitions = 1024;  // MQA at batch 1 needs more than the default's 64
  EXPECT_EQ(auto_partitions(rule, 132, rule_work_units(1, 64, 64), 1 << 20), 264);
  EXPECT_EQ(auto_partitions(rule, 132, rule_work_units(1, 64, 16), 1 << 20), 66);
}

TEST(Select, BucketChoiceMinimisesGeometricMeanNotOneProblem) {
  // Two problems in one bucket (4096 and 6000 keys): X is best on the first by 1% but 30% slow on
  // the second; Y is 2% off the best on both. Y has the lower geometric mean.
  Report r;
  r.meta.gpu_name = "G";
  r.meta.sm_count = kSmCount;
  const KernelTraits x = tile(64, 4), y = tile(32, 2), z = tile(64, 2);
  r.rows.push_back(make_row(x, 1, 4096, 4, 99));
  r.rows.push_back(make_row(y, 1, 4096, 4, 102));
  r.rows.push_back(make_row(z, 1, 4096, 4, 100));
  r.rows.push_back(make_row(x, 1, 6000, 4, 130));
  r.rows.push_back(make_row(y, 1, 6000, 4, 102));
  r.rows.push_back(make_row(z, 1, 6000, 4, 100));
  r.rows.push_back(make_row(z, 1, 6000, 8, 100.5));
  // A failed row, however fast, is never chosen.
  ResultRow failed = make_row(x, 1, 6000, 4, 1);
  failed.kernel = "decode_broken";
  failed.status = Status::kIncorrect;
  r.rows.push_back(failed);
  // z wins on both problems; drop its rows on the first problem to make the choice between x, y.
  r.rows.erase(r.rows.begin() + 2);
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.buckets.size(), 1u);
  const BucketChoice& b = s.buckets[0];
  EXPECT_EQ(b.problems, 2);
  EXPECT_EQ(b.covered, 2);  // z covers only one problem: x and y cover both
  EXPECT_EQ(b.traits.bn, 32) << "chose " << b.kernel;
  EXPECT_EQ(b.partitions, 4);
  EXPECT_NEAR(b.geomean_cost, std::sqrt((102.0 / 99.0) * (102.0 / 100.0)), 1e-9);
}

Report empty_report() {
  Report r;
  r.meta.gpu_name = "G";
  r.meta.sm_count = kSmCount;
  return r;
}

TEST(Select, QueryLengthsAreBucketsOfTheirOwn) {
  // One multi-token shape at 2 and 8 tokens: bn32 wins at 2, bn64 at 8. Each q_len is its own
  // bucket, named _q<N>, and the lookup takes the nearest q_len's.
  Report r = empty_report();
  auto row = [](int bn, int q_len, double us) {
    KernelTraits t = tile(bn, bn == 32 ? 2 : 4);
    t.mask = "causal";
    t.multi_token = true;
    ResultRow row = make_row(t, 1, 8192, 4, us);
    row.problem.mask = "causal";
    row.problem.q_len = q_len;
    row.problem.name += "_q" + std::to_string(q_len);
    return row;
  };
  r.rows = {row(32, 2, 10), row(64, 2, 12), row(32, 8, 15), row(64, 8, 13)};
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.buckets.size(), 2u);
  EXPECT_EQ(s.buckets[0].key.q_len, 2);
  EXPECT_EQ(s.buckets[0].traits.bn, 32);
  EXPECT_EQ(s.buckets[1].traits.bn, 64);
  EXPECT_NE(bucket_name(s.buckets[1].key).find("bf16_mt_"), std::string::npos);
  EXPECT_NE(bucket_name(s.buckets[1].key).find("_q8"), std::string::npos);
  // Query lengths apart by powers of two: 3 is nearest 2, 16 nearest 8.
  auto nearest_bn = [&](int q_len) {
    return lookup_config(s, "bf16_mt", 128, 4, "contig", "causal", 8, 8192, kSmCount, false, q_len)
        .bucket->traits.bn;
  };
  EXPECT_EQ(nearest_bn(3), 32);
  EXPECT_EQ(nearest_bn(16), 64);
  ASSERT_EQ(s.q_len_holdout.size(), 2u);
  EXPECT_EQ(s.q_len_holdout[0].held_out, "q_len=2");
}

// One shape's rows on tile bn64/4 stages: fixed counts timed by `fixed`, and one other split
// (a plan or a cluster split) timed `split_us`.
void add_shape(Report& r, int batch, int keys, std::initializer_list<int> counts,
               const std::function<double(int)>& fixed, int split, double split_us) {
  const KernelTraits t = tile(64, 4);
  for (int p : counts) r.rows.push_back(make_row(t, batch, keys, p, fixed(p)));
  r.rows.push_back(make_row(t, batch, keys, split, split_us));
}

TEST(Select, ABucketChoosesASplitPlanWhereItIsFastestAndTheRuleIgnoresPlans) {
  // A ragged bucket (batch 4, up to 4096 keys) where the plan beats every fixed count, and a
  // uniform one (batch 1) where a fixed count wins; plans never enter the fixed-P rule's fit.
  Report r = empty_report();
  const int plan = encode_split_plan({2, 128});
  add_shape(
      r, 4, 4096, {1, 4, 16}, [](int p) { return 100.0 + p; }, plan, 70.0);
  add_shape(
      r, 1, 4096, {1, 4, 16}, [](int p) { return p == 4 ? 10.0 : 20.0; }, plan, 11.0);
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.buckets.size(), 2u);
  for (const BucketChoice& b : s.buckets)
    EXPECT_EQ(b.partitions, b.key.work_units == 32 ? plan : 4) << bucket_name(b.key);
  EXPECT_GE(s.rule.max_partitions, 1);
  EXPECT_LE(s.rule.max_partitions, 16) << "a plan code is not a partition count";
  EXPECT_NEAR(s.geomean_cost, 1.0, 1e-9);
}

TEST(Select, ABucketChoosesAClusterSplitWhereItIsFastestAndTheTableSaysSo) {
  // Batch 1, 512 keys: the cluster combine of 4 partitions beats every reduce launch; batch 16,
  // 32k keys: a fixed count wins. Cluster splits never enter the rule (not counts).
  Report r = empty_report();
  const int cluster4 = encode_cluster_split(4);
  add_shape(
      r, 1, 512, {1, 4, 8}, [](int p) { return 6.0 + 0.1 * p; }, cluster4, 5.2);
  add_shape(
      r, 16, 32768, {1, 4, 8}, [](int p) { return p == 8 ? 100.0 : 150.0; }, cluster4, 160.0);
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.buckets.size(), 2u);
  for (const BucketChoice& b : s.buckets)
    EXPECT_EQ(b.partitions, b.key.work_units == 8 ? cluster4 : 8) << bucket_name(b.key);
  EXPECT_LE(s.rule.max_partitions, 8) << "a cluster code is not a partition count";
  EXPECT_NEAR(s.geomean_cost, 1.0, 1e-9);
  EXPECT_EQ(lookup_config(s, "bf16", 128, 4, "contig", "null", 8, 512, kSmCount).partitions,
            cluster4);
  EXPECT_FALSE(
      is_cluster_split(lookup_config(s, "bf16", 128, 4, "contig", "null", 8, 512, 78).partitions))
      << "another GPU gets the rule's count";
  // The library's table carries the split, cluster code included, for the bucket's own shape.
  const DefaultsTable t = decisions_of(s);
  ASSERT_EQ(t.families.size(), 1u);
  const DefaultsEntry* e = lookup_defaults(t, {t.families[0].family, 8, 512, false});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->partitions, cluster4);
  EXPECT_TRUE(e->is_measured);
  e = lookup_defaults(t, {t.families[0].family, 128, 32768, false});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->partitions, 8);
}

TEST(Select, RaggedBatchesHaveTheirOwnBucketsAndFindThemFirst) {
  // One uniform and one ragged batch of the same batch size and longest length: two buckets, a
  // count for the uniform one and a plan for the ragged one; a ragged shape no bucket measured
  // finds the ragged bucket (and keeps its plan), a uniform one the uniform bucket.
  Report r;
  r.meta.gpu_name = "G";
  r.meta.sm_count = kSmCount;
  const KernelTraits t = tile(64, 4);
  const int plan = encode_split_plan({1, 256});
  for (int p : {1, 4}) {
    r.rows.push_back(make_row(t, 4, 4096, p, p == 4 ? 50.0 : 80.0));
    r.rows.push_back(as_ragged(make_row(t, 4, 4096, p, p == 4 ? 40.0 : 45.0)));
  }
  r.rows.push_back(make_row(t, 4, 4096, plan, 55.0));
  r.rows.push_back(as_ragged(make_row(t, 4, 4096, plan, 20.0)));
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.buckets.size(), 2u);
  EXPECT_EQ(s.buckets[0].key.ragged, false);
  EXPECT_EQ(s.buckets[0].partitions, 4);
  EXPECT_EQ(s.buckets[1].key.ragged, true);
  EXPECT_EQ(s.buckets[1].partitions, plan);
  EXPECT_NE(bucket_name(s.buckets[1].key).find("_ragged"), std::string::npos);
  const ConfigLookup far_ragged =
      lookup_config(s, "bf16", 128, 4, "contig", "null", 64, 1 << 16, kSmCount, true);
  ASSERT_NE(far_ragged.bucket, nullptr);
  EXPECT_TRUE(far_ragged.bucket->key.ragged);
  EXPECT_EQ(far_ragged.partitions, plan) << "a plan carries over to a shape not measured";
  const ConfigLookup far_uniform =
      lookup_config(s, "bf16", 128, 4, "contig", "null", 64, 1 << 16, kSmCount, false);
  ASSERT_NE(far_uniform.bucket, nullptr);
  EXPECT_FALSE(far_uniform.bucket->key.ragged);
  EXPECT_GT(far_uniform.partitions, 0) << "a count is replaced by the rule";
}

TEST(Select, RaggedBatchOutsideItsBucketTakesTheRaggedPlanOfItsCacheKind) {
  // Ragged contiguous and paged batches whose best plans differ (1 and 2 blocks per SM), and a
  // paged ragged bucket that chose a count. A ragged shape no bucket measured takes the best
  // plan of the nearest ragged bucket of its own cache kind, never the other kind's: plans'
  // knobs depend on the kind (paged steps want 2 blocks per SM, docs/performance.md).
  Report r;
  r.meta.gpu_name = "G";
  r.meta.sm_count = kSmCount;
  const KernelTraits t = tile(64, 4);
  const int plan1 = encode_split_plan({1, 512}), plan2 = encode_split_plan({2, 128});
  r.rows.push_back(as_ragged(make_row(t, 4, 4096, plan1, 20.0), "contig"));
  r.rows.push_back(as_ragged(make_row(t, 4, 4096, plan2, 30.0), "contig"));
  r.rows.push_back(as_ragged(make_row(t, 4, 4096, 8, 25.0), "paged"));
  r.rows.push_back(as_ragged(make_row(t, 4, 4096, plan1, 40.0), "paged"));
  r.rows.push_back(as_ragged(make_row(t, 4, 4096, plan2, 26.0), "paged"));
  r.rows.push_back(make_row(t, 4, 4096, 4, 30.0));  // a uniform contiguous bucket
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.buckets.size(), 3u);
  for (const BucketChoice& b : s.buckets) {
    if (!b.key.ragged) continue;
    EXPECT_EQ(b.partitions, b.key.kv == "contig" ? plan1 : 8) << bucket_name(b.key);
    EXPECT_EQ(b.ragged_plan, b.key.kv == "contig" ? plan1 : plan2) << bucket_name(b.key);
  }
  const ConfigLookup paged =
      lookup_config(s, "bf16", 128, 4, "paged", "null", 256, 1 << 16, kSmCount, true);
  ASSERT_NE(paged.bucket, nullptr);
  EXPECT_FALSE(paged.is_exact);
  EXPECT_EQ(paged.bucket->key.kv, "paged") << "the tile comes from the same cache kind";
  EXPECT_EQ(paged.partitions, plan2) << "its kind's best plan, not the bucket's count";
  const ConfigLookup contig =
      lookup_config(s, "bf16", 128, 4, "contig", "null", 256, 1 << 16, kSmCount, true);
  ASSERT_NE(contig.bucket, nullptr);
  EXPECT_EQ(contig.partitions, plan1);
  // No ragged bucket of this kind: the nearest bucket (a tie of the ragged ones, broken by
  // order: contig) and its choice, a plan, which carries over.
  const ConfigLookup hnd =
      lookup_config(s, "bf16", 128, 4, "paged_hnd", "null", 256, 1 << 16, kSmCount, true);
  ASSERT_NE(hnd.bucket, nullptr);
  EXPECT_EQ(hnd.bucket->key.kv, "contig");
  EXPECT_EQ(hnd.partitions, plan1);

  // The library's table answers the same for ragged batches of the kinds measured.
  const DefaultsTable table = decisions_of(s);
  for (const char* kv : {"contig", "paged"}) {
    const ConfigLookup l =
        lookup_config(s, "bf16", 128, 4, kv, "null", 256, 1 << 16, kSmCount, true);
    const DefaultsEntry* e = lookup_defaults(
        table, {family_name("bf16", 128, 4, kv, "null", false), 256, 1 << 16, true});
    ASSERT_NE(e, nullptr) << kv;
    EXPECT_TRUE(e->ragged) << kv;
    EXPECT_EQ(e->kernel, l.bucket->kernel) << kv;
    EXPECT_EQ(e->partitions, l.partitions) << kv;
  }
  EXPECT_EQ(lookup_defaults(table, {family_name("bf16", 128, 4, "paged_hnd", "null", false), 256,
                                    1 << 16, true}),
            nullptr)
      << "no family of that kind was measured: the library falls back to its own kernels";
}

TEST(Select, RaggedHoldoutHalvesKeepEachMixsCacheKindsTogether) {
  // Four mixes, each contiguous and paged: each half holds two whole mixes (four problems),
  // not every contiguous problem in one half and every paged one in the other.
  Report r;
  r.meta.gpu_name = "G";
  r.meta.sm_count = kSmCount;
  const KernelTraits t = tile(64, 4);
  for (int mix = 0; mix < 4; ++mix) {
    for (const char* kv : {"contig", "paged"}) {
      for (int p : {1, 4}) {
        ResultRow row = make_row(t, 4, 4096, p, p == 4 ? 40.0 : 50.0);
        row.problem.name = "mix" + std::to_string(mix) + "_" + kv;
        row.problem.kv = kv;
        row.problem.ragged_lengths = {4096, 100 + mix, 100, 100};
        row.problem.lengths = "ragged" + std::to_string(mix);
        r.rows.push_back(row);
      }
    }
  }
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.ragged_holdout.size(), 2u);
  for (const HoldoutCost& h : s.ragged_holdout) EXPECT_EQ(h.problems, 4) << "half " << h.half;
}

TEST(Select, ChoosesTheModelOptimumPerBucket) {
  const Selection s = select_defaults({synthetic_report()}, {"synthetic.json"});
  EXPECT_EQ(s.buckets.size(), 16u);  // one bucket per (batch, length)
  for (const BucketChoice& b : s.buckets) {
    const int keys = 1 << b.key.length_log2;
    int best_bn = 0, best_p = 0;
    double best = 1e30;
    for (int bn : {32, 64}) {
      for (int p : {1, 2, 4, 8, 16, 32}) {
        const double t = model_us(bn, b.key.work_units, keys, p);
        if (t < best - 1e-12) {
          best = t;
          best_bn = bn;
          best_p = p;
        }
      }
    }
    EXPECT_EQ(b.traits.bn, best_bn) << bucket_name(b.key);
    EXPECT_EQ(b.partitions, best_p) << bucket_name(b.key);
    EXPECT_DOUBLE_EQ(b.geomean_cost, 1.0);
  }
  EXPECT_DOUBLE_EQ(s.geomean_cost, 1.0);
  EXPECT_DOUBLE_EQ(s.worst_cost, 1.0);
}

TEST(Select, FittedRuleBeatsTheDefaultAndHoldsOut) {
  const Selection s = select_defaults({synthetic_report()}, {"synthetic.json"});
  EXPECT_TRUE(s.rule.is_fitted);
  EXPECT_EQ(s.rule.max_partitions, 32);  // the most measured
  // The same cost with the unfitted default rule, computed from the per-problem data.
  Selection with_default = s;
  with_default.rule = default_partition_rule();
  with_default.rule.max_partitions = 32;
  double log_sum = 0;
  for (const BucketChoice& b : s.buckets) {
    const int keys = 1 << b.key.length_log2;
    const int p = auto_partitions(with_default.rule, kSmCount, b.key.work_units, keys);
    int measured = 1;  // nearest measured power of two
    while (measured * 2 <= p && measured < 32) measured *= 2;
    if (p - measured > 2 * measured - p && measured < 32) measured *= 2;
    double best = 1e30;
    for (int bn : {32, 64}) {
      for (int q : {1, 2, 4, 8, 16, 32})
        best = std::min(best, model_us(bn, b.key.work_units, keys, q));
    }
    log_sum += std::log(model_us(b.traits.bn, b.key.work_units, keys, measured) / best);
  }
  const double default_cost = std::exp(log_sum / s.buckets.size());
  EXPECT_LE(s.rule_geomean_cost, default_cost + 1e-12);
  EXPECT_LT(s.rule_geomean_cost, 1.10);
  EXPECT_GE(s.rule_worst_cost, s.rule_geomean_cost);
  // Every length held out in turn; its problems fall back to the nearest bucket and the rule.
  ASSERT_EQ(s.holdout.size(), 4u);
  for (const HoldoutCost& h : s.holdout) {
    EXPECT_EQ(h.problems, 4);
    EXPECT_EQ(h.uncovered, 0);
    EXPECT_GE(h.geomean_cost, 1.0);
    EXPECT_LT(h.geomean_cost, 1.5) << "keys " << h.keys;
  }
  const nlohmann::json j = selection_to_json(s);
  EXPECT_EQ(j["buckets"].size(), 16u);
  EXPECT_EQ(j["buckets"][0]["q_len"], 1);  // the bucket's query tokens, for readers of the file
  EXPECT_EQ(j["cost"]["holdout_by_length"].size(), 4u);
  EXPECT_EQ(j["cost"]["problems"].size(), 16u);
  EXPECT_TRUE(j["partition_rule"]["fitted"].get<bool>());
}

TEST(Select, LookupFallsBackToNearestBucketAndRule) {
  const Selection s = select_defaults({synthetic_report()}, {"synthetic.json"});
  ConfigLookup l = lookup_config(s, "bf16", 128, 4, "contig", "null", 8, 2048, kSmCount);
  ASSERT_NE(l.bucket, nullptr);
  EXPECT_TRUE(l.is_exact);
  EXPECT_EQ(l.partitions, l.bucket->partitions);
  // Another GPU: same bucket, partitions from the rule.
  l = lookup_config(s, "bf16", 128, 4, "contig", "null", 8, 2048, 78);
  EXPECT_TRUE(l.is_exact);
  EXPECT_EQ(l.partitions, auto_partitions(s.rule, 78, 8, 2048));
  // An unmeasured length: nearest bucket (below 1024 keys, bn32 wins), rule partitions.
  l = lookup_config(s, "bf16", 128, 4, "contig", "null", 8, 300, kSmCount);
  ASSERT_NE(l.bucket, nullptr);
  EXPECT_FALSE(l.is_exact);
  EXPECT_EQ(l.bucket->key.length_log2, 9);
  EXPECT_EQ(l.partitions, auto_partitions(s.rule, kSmCount, 8, 300));
  EXPECT_EQ(lookup_config(s, "fp16", 128, 4, "contig", "null", 8, 300, kSmCount).bucket, nullptr);
}

TEST(Select, RefusesMixedGpusAndEmptyInput) {
  Report other = synthetic_report();
  other.meta.gpu_name = "NVIDIA A100";
  other.meta.sm_count = 108;
  EXPECT_THROW(select_defaults({synthetic_report(), other}, {"a.json", "b.json"}), UsageError);
  Report none = synthetic_report();
  for (ResultRow& r : none.rows) r.status = Status::kFailed;
  EXPECT_THROW(select_defaults({none}, {"none.json"}), UsageError);
}

// The committed peers report (PyTorch SDPA rows "peer_*", tile all 0) is not a kernel sweep: no
// header naming tile bm0_bn0 may come of it, alone or beside a real sweep.
TEST(Select, RefusesAReportThatIsNotAKernelSweep) {
  const std::string peers = MHA_SOURCE_DIR "/results/h200_2026-11-29_peers.json";
  const Report report = read_report_json(peers);
  ASSERT_FALSE(report.rows.empty());
  const std::vector<std::pair<std::vector<Report>, std::vector<std::string>>> cases = {
      {{report}, {peers}}, {{synthetic_report(), report}, {"sweep.json", peers}}};
  for (const auto& [reports, sources] : cases) {
    try {
      select_defaults(reports, sources);
      FAIL() << "a peers report was accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("peers.json: rows[0].traits: kernel 'peer_"), std::string::npos) << what;
      EXPECT_NE(what.find("not a `mha-tune sweep` report"), std::string::npos) << what;
    }
  }
  SelectExtras extras;
  extras.out_defaults = temp_dir() / "peers_defaults.json";
  EXPECT_THROW(run_select({peers}, "", extras), UsageError);
  EXPECT_FALSE(std::filesystem::exists(extras.out_defaults));
}

TEST(Select, TheDefaultsTableIsRewrittenOnlyWhenItChanges) {
  // A build embeds it (CMake's MHA_DEFAULTS_JSON): an unchanged file must not rebuild the library.
  const auto dir = temp_dir();
  const std::string report = (dir / "report2.json").string();
  const Report r = synthetic_report();
  write_report_json(report, r.meta, r.rows);
  SelectExtras extras;
  extras.out_defaults = (dir / "unchanged.json").string();
  run_select({report}, "", extras);
  const auto first = std::filesystem::last_write_time(extras.out_defaults);
  std::filesystem::last_write_time(extras.out_defaults, first - std::chrono::hours(1));
  run_select({report}, "", extras);
  EXPECT_EQ(std::filesystem::last_write_time(extras.out_defaults), first - std::chrono::hours(1));
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

// `sweep --partitions auto --rule FILE` reads the rule select fitted on the committed baseline.
TEST(ReadPartitionRule, ReadsTheCommittedDefaults) {
  const PartitionRule rule =
      read_partition_rule(std::string(MHA_SOURCE_DIR) + "/results/h200_2026-11-29_defaults.json");
  EXPECT_TRUE(rule.is_fitted);
  EXPECT_DOUBLE_EQ(rule.alpha, 0.75);
  EXPECT_EQ(rule.min_keys_per_partition, 128);
  EXPECT_EQ(auto_partitions(rule, 132, 8, 32768), 13);  // ceil(0.75 * 132 / 8)
}

TEST(ReadPartitionRule, RejectsAFileWithoutARule) {
  EXPECT_THROW(read_partition_rule(std::string(MHA_SOURCE_DIR) + "/configs/suites/ci.json"),
               UsageError);
  EXPECT_THROW(read_partition_rule("/nonexistent/defaults.json"), UsageError);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

Report synthetic_report_with_keys(std::initializer_list<int> lengths) {
  Report all = synthetic_report();
  Report r = all;
  r.rows.clear();
  for (const ResultRow& row : all.rows)
    if (std::find(lengths.begin(), lengths.end(), row.problem.keys) != lengths.end())
      r.rows.push_back(row);
  return r;
}

TEST(Select, DefaultsComeFromTheBucketThenTheModelThenTheTable) {
  const Selection s = select_defaults({synthetic_report()}, {"synthetic.json"});
  ProblemShape measured = synthetic_report().rows.front().problem;
  EXPECT_EQ(choose_default(s, measured).source, "bucket");
  ProblemShape unmeasured = measured;
  unmeasured.batch = 3;
  unmeasured.keys = 3000;
  const DefaultChoice m = choose_default(s, unmeasured);
  EXPECT_EQ(m.source, "model");
  EXPECT_GT(m.predicted_us, 0);
  EXPECT_FALSE(m.runner_up.empty());
  ProblemShape ragged = unmeasured;  // plans adapt when they run: ragged batches keep the table
  ragged.lengths = "ragged3000-100-100";
  ragged.ragged_lengths = {3000, 100, 100};
  EXPECT_EQ(choose_default(s, ragged).source, "table");
}

TEST(Select, HoldsOutEachBatchAndEachFamily) {
  const Selection s = select_defaults({synthetic_report()}, {"synthetic.json"});
  ASSERT_EQ(s.batch_holdout.size(), 4u);  // batches 1, 2, 4, 16
  for (const HoldoutCost& h : s.batch_holdout) {
    EXPECT_EQ(h.problems, 4) << h.held_out;
    EXPECT_EQ(h.model_uncovered, 0) << h.held_out;
    EXPECT_GE(h.model_geomean_cost, 1.0) << h.held_out;
    EXPECT_GE(h.model_worst_cost, h.model_geomean_cost) << h.held_out;
  }
  EXPECT_TRUE(s.family_holdout.empty());  // one family: nothing to hold out against
  for (const HoldoutCost& h : s.holdout) EXPECT_EQ(h.held_out, "keys=" + std::to_string(h.keys));
}

TEST(Select, AProblemWhoseEveryRowFailedIsNamed) {
  Report r = synthetic_report();
  ResultRow broken = r.rows.front();
  broken.problem.name = "broken_problem";
  broken.status = Status::kIncorrect;
  r.rows.push_back(broken);
  const Selection s = select_defaults({r}, {"r.json"});
  ASSERT_EQ(s.failed_problems, std::vector<std::string>{"broken_problem"});
  EXPECT_TRUE(s.untuned_buckets.empty()) << "its bucket was measured on another problem";
  ResultRow lone = broken;  // a shape no other problem shares: its bucket is untuned
  lone.problem.name = "broken_alone";
  lone.problem.batch = 3;
  r.rows.push_back(lone);
  const Selection t = select_defaults({r}, {"r.json"});
  ASSERT_EQ(t.untuned_buckets.size(), 1u);
  EXPECT_EQ(t.untuned_buckets[0], bucket_name(bucket_of(lone.problem)));
  EXPECT_EQ(selection_to_json(t)["untuned_buckets"][0], t.untuned_buckets[0]);
  EXPECT_EQ(selection_to_json(s)["failed_problems"][0], "broken_problem");
  EXPECT_NE(selection_summary(s).find("broken_problem"), std::string::npos);
}

TEST(SelectEvaluate, PricesHeldOutProblemsByTheirOwnTimes) {
  const auto dir = temp_dir();
  const std::string train = (dir / "train.json").string(), test = (dir / "test.json").string();
  const Report tr = synthetic_report_with_keys({512, 8192, 32768});
  const Report te = synthetic_report_with_keys({2048});
  write_report_json(train, tr.meta, tr.rows);
  write_report_json(test, te.meta, te.rows);
  SelectExtras extras;
  extras.evaluate_paths = {test};
  extras.evaluation_json = (dir / "evaluation.json").string();
  ASSERT_EQ(run_select({train}, "", extras), 0);
  std::ifstream in(extras.evaluation_json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["overall"]["problems"], 4);
  EXPECT_EQ(j["overall"]["uncovered"], 0);
  EXPECT_EQ(j["by_batch"].size(), 4u);
  ASSERT_EQ(j["by_kind"].size(), 1u);
  EXPECT_EQ(j["by_kind"][0]["group"], "contig");
  for (const auto& p : j["problems"]) {
    EXPECT_EQ(p["source"], "model") << p["problem"];
    EXPECT_GE(p["cost"].get<double>(), 1.0) << p["problem"];
    EXPECT_NEAR(p["cost"].get<double>(),
                p["measured_us"].get<double>() / p["best_us"].get<double>(), 1e-9);
    EXPECT_FALSE(p["in_training"].get<bool>());
  }
  EXPECT_LT(j["overall"]["geomean_cost"].get<double>(), 1.2);
}

TEST(SelectEvaluate, ProblemsOfTheTrainingReportsAreNotHeldOutAndNothingPricedFails) {
  const auto dir = temp_dir();
  const std::string train = (dir / "train_only.json").string();
  const Report tr = synthetic_report_with_keys({512, 8192});
  write_report_json(train, tr.meta, tr.rows);
  SelectExtras extras;
  extras.evaluate_paths = {train};
  EXPECT_EQ(run_select({train}, "", extras), 1);  // every problem in training: nothing evaluated
  Report other_gpu = tr;
  other_gpu.meta.gpu_name = "NVIDIA H100";
  const std::string other = (dir / "other_gpu.json").string();
  write_report_json(other, other_gpu.meta, other_gpu.rows);
  extras.evaluate_paths = {other};
  EXPECT_THROW(run_select({train}, "", extras), UsageError);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(SelectDefaultsTable, TheLibrarysTableAnswersWhatSelectChose) {
  const auto dir = temp_dir();
  const std::string report = (dir / "for_table.json").string();
  const Report r = synthetic_report();
  write_report_json(report, r.meta, r.rows);
  SelectExtras extras;
  extras.out_defaults = (dir / "defaults_table.json").string();
  ASSERT_EQ(run_select({report}, "", extras), 0);
  std::ifstream in(extras.out_defaults);
  std::stringstream text;
  text << in.rdbuf();
  const DefaultsTable t = defaults_from_json_text(text.str(), extras.out_defaults);
  EXPECT_EQ(t.sm_count, kSmCount);
  ASSERT_EQ(t.families.size(), 1u);
  const Selection s = select_defaults({r}, {report});
  // Shapes on the grid (KV heads 8: batch x KV heads a power of two) and between its points.
  for (int batch : {1, 2, 3, 16, 100}) {
    for (int keys : {512, 3000, 32768, 200000}) {
      ProblemShape p = r.rows.front().problem;
      p.batch = batch;
      p.keys = keys;
      const DefaultsEntry* e = lookup_defaults(t, {t.families[0].family, batch * 8, keys, false});
      ASSERT_NE(e, nullptr);
      if (half_octave(batch * 8) == e->work_half_octave &&
          half_octave(keys) == e->keys_half_octave &&
          (1 << (half_octave(batch * 8) / 2)) == batch * 8 && half_octave(keys) % 2 == 0 &&
          (1 << (half_octave(keys) / 2)) == keys) {
        const DefaultChoice c = choose_default(s, p);  // a grid point: the same answer
        EXPECT_EQ(e->kernel, c.kernel) << batch << " x " << keys;
        EXPECT_EQ(e->partitions, c.partitions) << batch << " x " << keys;
        EXPECT_EQ(e->is_measured, c.source == "bucket") << batch << " x " << keys;
      }
    }
  }
}

}  // namespace
}  // namespace mha
