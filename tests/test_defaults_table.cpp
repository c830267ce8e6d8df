// Host tests for the run-time defaults table: the nearest entry of a family, raggedness first, its
// JSON form read back with the time model it carries, which entry answers for its own shape, and
// files that are refused with the key that is wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/split_code.h"
#include "defaults/defaults_table.h"
#include "tests/test_support.h"

namespace mha {
namespace {

DefaultsTable table() {
  DefaultsTable t;
  t.gpu_name = "NVIDIA H200";
  t.sm_count = 132;
  DefaultsFamily f;
  f.family = family_name("bf16", 128, 4, "contig", "null", false);
  f.entries = {{6, 18, false, "k_a", 1, true, {}},
               {6, 26, false, "k_b", 16, false, {}},
               {12, 26, false, "k_c", 4, false, {}},
               {6, 26, true, "k_d", encode_split_plan({1, 128}), true, {}}};
  t.families.push_back(f);
  return t;
}

TEST(DefaultsTable, NamesFamiliesAndTilesAsSelectDoes) {
  EXPECT_EQ(family_name("bf16", 128, 4, "contig", "null", false), "bf16_d128_g4_contig_null");
  EXPECT_EQ(family_name("bf16_kve4m3", 64, 64, "paged", "window", true),
            "bf16_kve4m3_d64_g64_paged_window_sink");
  EXPECT_EQ(tile_of_kernel_name(
                "decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4_wsk"),
            "bm16_bn64_bk32_wm16_wn16_t128_s4_wsk");
  EXPECT_EQ(tile_of_kernel_name("peer_flashinfer"), "");
  EXPECT_EQ(half_octave(1), 0);
  EXPECT_EQ(half_octave(8), 6);
  EXPECT_EQ(half_octave(512), 18);
  EXPECT_EQ(half_octave(724), 19);  // 2^9.5
}

TEST(DefaultsTable, TakesTheNearestEntryOfTheFamilyAndItsRaggedness) {
  const DefaultsTable t = table();
  const std::string f = t.families[0].family;
  EXPECT_EQ(lookup_defaults(t, {f, 8, 512, false})->kernel, "k_a");
  EXPECT_EQ(lookup_defaults(t, {f, 8, 8192, false})->kernel, "k_b");
  EXPECT_EQ(lookup_defaults(t, {f, 64, 100000, false})->kernel, "k_c");
  EXPECT_EQ(lookup_defaults(t, {f, 1, 1, false})->kernel, "k_a");    // beyond the grid: its edge
  EXPECT_EQ(lookup_defaults(t, {f, 64, 512, true})->kernel, "k_d");  // the only ragged entry
  EXPECT_EQ(lookup_defaults(t, {"bf16_d128_g8_contig_null", 8, 512, false}), nullptr);
}

TEST(DefaultsTable, ReadsBackWhatItWrites) {
  const DefaultsTable t = table();
  const DefaultsTable back = defaults_from_json_text(defaults_to_json_text(t), "t.json");
  EXPECT_EQ(back.gpu_name, t.gpu_name);
  EXPECT_EQ(back.sm_count, t.sm_count);
  EXPECT_EQ(back.origin, "t.json");
  ASSERT_EQ(back.families.size(), 1u);
  ASSERT_EQ(back.families[0].entries.size(), t.families[0].entries.size());
  for (size_t i = 0; i < t.families[0].entries.size(); ++i) {
    const DefaultsEntry &a = t.families[0].entries[i], &b = back.families[0].entries[i];
    EXPECT_EQ(a.work_half_octave, b.work_half_octave);
    EXPECT_EQ(a.keys_half_octave, b.keys_half_octave);
    EXPECT_EQ(a.ragged, b.ragged);
    EXPECT_EQ(a.kernel, b.kernel);
    EXPECT_EQ(a.partitions, b.partitions);
    EXPECT_EQ(a.is_measured, b.is_measured);
  }
}

TEST(DefaultsTable, AlternativesReadBackAndAreOptional) {
  DefaultsTable t = table();
  DefaultsEntry& e = t.families[0].entries[0];
  e.alternatives = {{"decode_bf16_bf16_d128_g4_contig_null_bm8_bn64_bk32_wm8_wn16_t128_s3_wsk",
                     kClusterSplitBase + 8},
                    {e.kernel, 16}};
  const std::string text = defaults_to_json_text(t);
  const DefaultsTable back = defaults_from_json_text(text, "t.json");
  const DefaultsEntry& b = back.families[0].entries[0];
  ASSERT_EQ(b.alternatives.size(), 2u);
  EXPECT_EQ(b.alternatives[0].kernel, e.alternatives[0].kernel);
  EXPECT_EQ(b.alternatives[0].partitions, kClusterSplitBase + 8);
  EXPECT_EQ(b.alternatives[1].kernel, e.kernel);
  EXPECT_EQ(b.alternatives[1].partitions, 16);
  EXPECT_NE(text.find("\"cluster8\""), std::string::npos);        // the split's text form
  EXPECT_TRUE(back.families[0].entries[1].alternatives.empty());  // written without: six items
}

void expect_refused(const std::string& text, const std::string& says) {
  try {
    defaults_from_json_text(text, "bad.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(DefaultsTable, RefusesBrokenFilesNamingTheKey) {
  const std::string rule =
      R"("partition_rule": {"alpha": 2, "min_keys_per_partition": 256, "max_partitions": 64, )"
      R"("fitted": true}, )";
  const std::string head =
      R"({"schema_version": 1, "gpu_name": "g", "sm_count": 132, "kernels": ["k"], )" + rule;
  expect_refused("not json", "not valid JSON");
  expect_refused(R"({"schema_version": 2})", "schema_version");
  expect_refused(R"({"schema_version": "1"})", "schema_version");
  expect_refused(head + R"("families": [{"family": "f", "entries": [[1, 2, false, 0, 1]]}]})",
                 "entries[0]: expected");
  expect_refused(
      head + R"("families": [{"family": "f", "entries": [[99, 2, false, 0, 1, true]]}]})",
      "half octaves");
  expect_refused(head + R"("families": [{"family": "f", "entries": [[1, 2, false, 7, 1, true]]}]})",
                 "kernel index 7");
  expect_refused(head + R"("families": [{"family": "f", "entries": [[1, 2, false, 0, 0, true]]}]})",
                 "partitions");
  expect_refused(
      R"({"schema_version": 1, "gpu_name": "g", "sm_count": -1, "kernels": [], "families": []})",
      "sm_count");
  expect_refused(head + R"("families": {}})", "families");
  // An entry with alternatives, the rest of the file valid.
  const auto with_entry = [&](const std::string& entry) {
    return head + R"("families": [{"family": "f", "entries": [)" + entry + "]}]}";
  };
  expect_refused(with_entry("[1, 2, false, 0, 1, true, [[0, 1], [0, 2], [0, 4], [0, 8]]]"),
                 "at most 3 alternatives");
  expect_refused(with_entry("[1, 2, false, 0, 1, true, [[5, 1]]]"), "[6][0]: kernel index 5");
  expect_refused(with_entry("[1, 2, false, 0, 1, true, [[0, 0]]]"), "[6][0]: partitions");
  expect_refused(with_entry("[1, 2, false, 0, 1, true, [0]]"),
                 "[6][0]: expected [kernel index, partitions]");
  expect_refused(R"({"schema_version": 1, "gpu_name": "g", "sm_count": 132, "kernels": [], )"
                 R"("families": []})",
                 "partition_rule");
  expect_refused(R"({"schema_version": 1, "gpu_name": "g", "sm_count": 132, "kernels": [], )"
                 R"("partition_rule": {"alpha": -1, "min_keys_per_partition": 256, )"
                 R"("max_partitions": 64, "fitted": true}, "families": []})",
                 "partition_rule");
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

// The committed H200 table (results/defaults/nvidia_h200.json, select --out-defaults over the
// committed H200 sweeps) reads back and covers the main sweep's families at every grid point.
// One fitted tile of the table's family, with a residual.
TimeModel one_tile_model() {
  TimeModel m;
  m.sm_count = 132;
  m.peak_read_gbps = 4500;
  TileModel t;
  t.traits = testing::llama_traits();
  t.traits.out_dtype = "bf16";
  t.traits.smem_bytes = 49152;
  t.family = "bf16_d128_g4_contig_null";
  t.tile = "bm16_bn64_bk32_wm16_wn16_t128_s4";
  t.kernel = "decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4";
  t.fixed_us = 3.5;
  t.tile_us = 1.25;
  t.blocks_per_sm = 2;
  t.bandwidth_gbps = 4275;
  t.reread_fraction = 0.25;
  t.reduce_us = 1.5;
  t.cluster_us = 0.5;
  t.splits = {1, 4, kClusterSplitBase + 8};
  t.residuals = {{4, 3.0, 13.0, -0.02}};
  t.rows = 12;
  t.rms_rel_error = 0.1;
  m.tiles.push_back(t);
  return m;
}

TEST(DefaultsTable, CarriesTheTimeModelAndReadsItBack) {
  DefaultsTable t = table();
  EXPECT_TRUE(defaults_from_json_text(defaults_to_json_text(t), "t.json").model.tiles.empty())
      << "a table without a model reads back without one";
  t.model = one_tile_model();
  const TimeModel back = defaults_from_json_text(defaults_to_json_text(t), "t.json").model;
  ASSERT_EQ(back.tiles.size(), 1u);
  const TileModel &a = t.model.tiles[0], &b = back.tiles[0];
  EXPECT_EQ(back.sm_count, 132);
  EXPECT_EQ(back.peak_read_gbps, 4500);
  EXPECT_EQ(b.kernel, a.kernel);
  EXPECT_EQ(b.traits.bn, a.traits.bn);
  EXPECT_EQ(b.traits.smem_bytes, a.traits.smem_bytes);
  EXPECT_EQ(b.traits.group, a.traits.group);
  EXPECT_EQ(b.tile_us, a.tile_us);
  EXPECT_EQ(b.blocks_per_sm, a.blocks_per_sm);
  EXPECT_EQ(b.splits, a.splits);
  ASSERT_EQ(b.residuals.size(), 1u);
  EXPECT_EQ(b.residuals[0].split, 4);
  EXPECT_EQ(b.residuals[0].log_ratio, -0.02);
}

TEST(DefaultsTable, AMeasuredEntryAnswersForItsOwnBatchOnly) {
  const DefaultsTable t = table();
  const std::string f = t.families[0].family;
  const DefaultsEntry& measured = t.families[0].entries[0];  // 8 work units, 512 keys
  EXPECT_TRUE(is_own_bucket(measured, {f, 8, 512, false}));
  EXPECT_TRUE(is_own_bucket(measured, {f, 8, 600, false}));    // the same keys' half octave
  EXPECT_FALSE(is_own_bucket(measured, {f, 9, 512, false}));   // nearest, but another batch
  EXPECT_FALSE(is_own_bucket(measured, {f, 8, 1024, false}));  // another half octave of keys
  EXPECT_FALSE(is_own_bucket(t.families[0].entries[1], {f, 8, 8192, false}));  // the model's
}

TEST(DefaultsTable, RefusesABrokenTimeModelNamingTheKey) {
  DefaultsTable t = table();
  t.model = one_tile_model();
  std::string text = defaults_to_json_text(t);
  const std::string key = "\"blocks_per_sm\":2";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(text.find(key), key.size(), "\"blocks_per_sm\":0");
  try {
    defaults_from_json_text(text, "t.json");
    FAIL() << "a tile with no resident block was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: time_model.tiles[0]"), std::string::npos)
        << e.what();
  }
}

TEST(DefaultsTable, TheCommittedH200TableReadsBackWhole) {
  const std::string path = std::string(MHA_SOURCE_DIR) + "/results/defaults/nvidia_h200.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const DefaultsTable t = defaults_from_json_text(text.str(), path);
  EXPECT_EQ(t.gpu_name, "NVIDIA H200");
  EXPECT_EQ(t.sm_count, 132);
  for (const char* family :
       {"bf16_d128_g4_contig_null", "bf16_d128_g1_contig_null", "bf16_d128_g8_contig_null",
        "bf16_d128_g16_contig_null", "bf16_d64_g64_contig_null", "bf16_d128_g4_paged_null"}) {
    const DefaultsEntry* e = lookup_defaults(t, {family, 40, 3000, false});
    ASSERT_NE(e, nullptr) << family;
    EXPECT_FALSE(tile_of_kernel_name(e->kernel).empty()) << e->kernel;
    EXPECT_NE(e->kernel.find(family), std::string::npos) << family << ": " << e->kernel;
  }
  EXPECT_GT(t.model.tiles.size(), 50u) << "the committed table carries select's time model";
}

}  // namespace
}  // namespace mha
