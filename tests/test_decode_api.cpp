// The library API of decode_api.h, with no GPU: names resolve to the registry's entries, an
// unknown name or missing partials launch nothing, and the workspace matches StepBuffers' sizes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "api/decode_api.h"
#include "api/time_model_choice.h"
#include "common/split_code.h"
#include "defaults/defaults_table.h"
#include "tests/test_support.h"

namespace {

TEST(DecodeApi, FindsEveryCompiledInstanceAndNothingElse) {
  const auto& registry = mha::kernel_registry();
  ASSERT_FALSE(registry.empty());
  for (const auto& k : registry) EXPECT_EQ(mha::find_kernel(k.name), &k);
  EXPECT_EQ(mha::find_kernel(""), nullptr);
  EXPECT_EQ(mha::find_kernel(registry.front().name + "_x"), nullptr);
}

TEST(DecodeApi, UnknownNameOrMissingPartialsLaunchNothing) {
  mha::DecodeParams p;
  // Both return before any CUDA call, so they are the same with and without a device.
  EXPECT_EQ(mha::decode(p, "decode_not_compiled", nullptr), cudaErrorInvalidValue);
  p.partitions = 2;
  EXPECT_EQ(mha::decode(p, mha::kernel_registry().front().name, nullptr), cudaErrorInvalidValue);
}

TEST(DecodeApi, WorkspaceHoldsThePartialsBackToBack) {
  // StepBuffers: rows * partitions * depth floats of partial_out, rows * partitions each of max
  // and sum (rows = batch * heads).
  EXPECT_EQ(mha::decode_workspace_bytes(3, 32, 128, 4), (3u * 32 * 4 * 128 + 2u * 3 * 32 * 4) * 4);
  EXPECT_EQ(mha::decode_workspace_bytes(3, 32, 128, 1), 0u);
  EXPECT_EQ(mha::decode_workspace_bytes(0, 32, 128, 4), 0u);

  mha::DecodeParams p;
  p.batch = 2, p.heads = 8, p.partitions = 3;
  std::vector<char> ws(mha::decode_workspace_bytes(p.batch, p.heads, 64, p.partitions));
  mha::attach_decode_workspace(p, 64, ws.data());
  const auto* base = reinterpret_cast<float*>(ws.data());
  EXPECT_EQ(p.partial_out, base);
  EXPECT_EQ(p.partial_max, base + 2 * 8 * 3 * 64);
  EXPECT_EQ(p.partial_sum, base + 2 * 8 * 3 * 64 + 2 * 8 * 3);
  EXPECT_EQ(reinterpret_cast<const char*>(p.partial_sum + 2 * 8 * 3), ws.data() + ws.size());

  // Several query tokens: every token's rows (q_len x heads a sequence), laid out the same way.
  EXPECT_EQ(mha::decode_workspace_bytes(3, 32, 128, 4, 8),
            8 * mha::decode_workspace_bytes(3, 32, 128, 4));
  p.q_len = 5;
  ws.assign(mha::decode_workspace_bytes(p.batch, p.heads, 64, p.partitions, p.q_len), 0);
  mha::attach_decode_workspace(p, 64, ws.data());
  const auto* tokens = reinterpret_cast<float*>(ws.data());
  EXPECT_EQ(p.partial_max, tokens + 2 * 5 * 8 * 3 * 64);
  EXPECT_EQ(reinterpret_cast<const char*>(p.partial_sum + 2 * 5 * 8 * 3), ws.data() + ws.size());
  p.q_len = 1;

  p.partitions = 1;
  mha::attach_decode_workspace(p, 64, ws.data());
  EXPECT_EQ(p.partial_out, nullptr);
  EXPECT_EQ(p.partial_max, nullptr);
  EXPECT_EQ(p.partial_sum, nullptr);
}

}  // namespace

namespace {

// choose_decode over the compiled-in defaults (results/defaults/nvidia_h200.json, from the H200's
// sweeps) and whatever kernels this build has (CI: configs/tiles/ci.json).
TEST(DecodeApi, ChoosesACompiledKernelThatComputesTheShape) {
  mha::DecodeShape s;  // Llama-3-8B, bf16, contiguous
  s.max_keys = 4096;
  const mha::DecodeChoice c = mha::choose_decode(s, 132);
  ASSERT_NE(c.kernel, nullptr) << c.reason;
  EXPECT_EQ(c.kernel->traits.group, 4);
  EXPECT_EQ(c.kernel->traits.dtype, "bf16");
  EXPECT_EQ(c.kernel->traits.kv, "contig");
  EXPECT_GE(c.partitions, 1);
  EXPECT_FALSE(c.reason.empty());
  // Tuned only where the compiled-in table's kernel (or its tile) is in this build.
  if (c.is_tuned) {
    EXPECT_EQ(c.reason.rfind("tuned: a measured bucket (compiled in", 0), 0u) << c.reason;
  }
}

TEST(DecodeApi, FallsBackToTheFamilysFirstKernelAndTheRule) {
  mha::DecodeShape s;
  s.dtype = "fp16";  // no fp16 bucket was measured
  s.out_dtype = "fp32";
  s.kv = "paged";
  s.max_keys = 1 << 17;
  const mha::DecodeChoice c = mha::choose_decode(s, 132);
  const mha::KernelEntry* first = nullptr;
  for (const auto& k : mha::kernel_registry())
    if (!first && k.traits.dtype == "fp16" && k.traits.out_dtype == "fp32" &&
        k.traits.kv == "paged" && k.traits.group == 4 && k.traits.depth == 128 &&
        k.traits.mask == "null" && !k.traits.has_sink)
      first = &k;
  EXPECT_EQ(c.kernel, first) << c.reason;
  EXPECT_FALSE(c.is_tuned);
  if (first) {
    EXPECT_GT(c.partitions, 1) << "batch 1, 8 KV heads, 131k keys: the rule splits";
    EXPECT_NE(c.reason.find("first compiled kernel of the family"), std::string::npos) << c.reason;
  }
}

TEST(DecodeApi, NoKernelForAShapeNothingComputesOrAnInvalidOne) {
  mha::DecodeShape s;
  s.heads = 28;  // group 7: not in the CI build
  s.kv_heads = 4;
  EXPECT_EQ(mha::choose_decode(s, 132).kernel, nullptr);
  s.heads = 30;  // not a multiple of kv_heads
  const mha::DecodeChoice bad = mha::choose_decode(s, 132);
  EXPECT_EQ(bad.kernel, nullptr);
  EXPECT_NE(bad.reason.find("invalid shape"), std::string::npos);
}

}  // namespace

namespace {

std::string write_table(const std::string& name, const mha::DefaultsTable& t) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << mha::defaults_to_json_text(t);
  return path;
}

// A table naming this build's first contiguous bf16 group-4 kernel at one grid point.
mha::DefaultsTable one_entry_table(const mha::KernelEntry& k, int partitions) {
  mha::DefaultsTable t;
  t.gpu_name = "NVIDIA H200";
  t.sm_count = 132;
  mha::DefaultsFamily f;
  f.family = mha::family_name("bf16", 128, 4, "contig", "null", false);
  f.entries.push_back(
      {mha::half_octave(8), mha::half_octave(4096), false, k.name, partitions, false, {}});
  t.families.push_back(f);
  return t;
}

const mha::KernelEntry* g4_contig_kernel() {
  for (const auto& k : mha::kernel_registry())
    if (k.traits.dtype == "bf16" && k.traits.out_dtype == "bf16" && k.traits.kv == "contig" &&
        k.traits.group == 4 && k.traits.depth == 128 && k.traits.mask == "null" &&
        !k.traits.has_sink && !k.traits.soft_cap && mha::cache_dtype(k.traits) == "bf16")
      return &k;
  return nullptr;
}

TEST(DecodeApiRunTimeDefaults, ALoadedTableAnswersFirstOnItsGpu) {
  const mha::KernelEntry* k = g4_contig_kernel();
  ASSERT_NE(k, nullptr) << "the CI build has a bf16 group-4 contiguous kernel";
  const std::string path = write_table("decode_api_table.json", one_entry_table(*k, 3));
  std::string error;
  ASSERT_TRUE(mha::load_decode_defaults(path, &error)) << error;
  EXPECT_EQ(mha::decode_defaults_origin(), path);
  mha::DecodeShape s;  // batch 1 x 8 KV heads, 5,000 keys: the entry is the nearest
  s.max_keys = 5000;
  mha::DecodeChoice c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.kernel, k);
  EXPECT_EQ(c.partitions, 3);
  EXPECT_FALSE(c.cluster_combine);
  EXPECT_NE(c.reason.find("tuned: the time model (" + path + ")"), std::string::npos) << c.reason;
  // Another GPU (SM count): neither table serves; the family's first kernel and the rule.
  c = mha::choose_decode(s, 114);
  EXPECT_NE(c.reason.find("first compiled kernel of the family"), std::string::npos) << c.reason;
  // A cluster split decodes to its count and the cluster flag.
  ASSERT_TRUE(mha::load_decode_defaults(
      write_table("decode_api_cluster.json", one_entry_table(*k, mha::kClusterSplitBase + 4))));
  c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.partitions, 4);
  EXPECT_TRUE(c.cluster_combine);
  mha::unload_decode_defaults();
  EXPECT_EQ(mha::decode_defaults_origin(), "");
  EXPECT_EQ(mha::choose_decode(s, 132).reason.find(path), std::string::npos);
}

TEST(DecodeApiRunTimeDefaults, ABuildWithoutTheTablesTileRunsItsFirstCompiledAlternative) {
  const mha::KernelEntry* k = g4_contig_kernel();
  ASSERT_NE(k, nullptr) << "the CI build has a bf16 group-4 contiguous kernel";
  mha::DefaultsTable t = one_entry_table(*k, 3);
  mha::DefaultsEntry& e = t.families[0].entries[0];
  e.kernel = "decode_bf16_bf16_d128_g4_contig_null_bm64_bn256_bk64_wm16_wn16_t1024_s9";
  e.alternatives = {{"decode_bf16_bf16_d128_g4_contig_null_bm32_bn512_bk64_wm16_wn16_t1024_s9", 2},
                    {k->name, mha::kClusterSplitBase + 4},
                    {k->name, 6}};
  const std::string path = write_table("decode_api_alternatives.json", t);
  ASSERT_TRUE(mha::load_decode_defaults(path));
  mha::DecodeShape s;  // batch 1 x 8 KV heads, 5,000 keys: the entry is the nearest
  s.max_keys = 5000;
  const mha::DecodeChoice c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.kernel, k);
  EXPECT_EQ(c.partitions, 4);
  EXPECT_TRUE(c.cluster_combine);
  EXPECT_FALSE(c.is_tuned);
  EXPECT_NE(c.reason.find("the time model's choice 3"), std::string::npos) << c.reason;
  // None of the choices compiled in: the loaded table does not answer (the compiled-in one or
  // the rule does, as without it).
  e.alternatives.resize(1);
  const std::string none = write_table("decode_api_alternatives_none.json", t);
  ASSERT_TRUE(mha::load_decode_defaults(none));
  const mha::DecodeChoice fallback = mha::choose_decode(s, 132);
  EXPECT_NE(fallback.kernel, nullptr);
  EXPECT_EQ(fallback.reason.find(none), std::string::npos) << fallback.reason;
  mha::unload_decode_defaults();
}

TEST(DecodeApiRunTimeDefaults, BetweenGridPointsTheTablesModelChoosesForTheShape) {
  const mha::KernelEntry* k = g4_contig_kernel();
  ASSERT_NE(k, nullptr) << "the CI build has a bf16 group-4 contiguous kernel";
  mha::DefaultsTable t = one_entry_table(*k, 3);  // the model's entry at 8 units, 4,096 keys
  // One tile whose blocks are slow (5 us a tile): eight partitions beat one by far.
  t.model = mha::testing::slow_blocks_model(k->traits, k->name, {1, 8});
  const std::string path = write_table("decode_api_model.json", t);
  ASSERT_TRUE(mha::load_decode_defaults(path));
  mha::DecodeShape s;  // batch 1 x 8 KV heads, 5,000 keys: the entry is the nearest
  s.max_keys = 5000;
  mha::DecodeChoice c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.kernel, k);
  EXPECT_EQ(c.partitions, 8);
  EXPECT_FALSE(c.is_tuned);
  EXPECT_NE(c.reason.find("the time model for this shape (" + path + ")"), std::string::npos)
      << c.reason;
  // The shape's own measured bucket answers itself, model or not.
  t.families[0].entries[0].is_measured = true;
  ASSERT_TRUE(mha::load_decode_defaults(write_table("decode_api_model_measured.json", t)));
  s.max_keys = 4096;
  c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.partitions, 3);
  EXPECT_TRUE(c.is_tuned);
  // Another batch takes the model, though the nearest entry was measured.
  s.batch = 3;
  c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.partitions, 8);
  mha::unload_decode_defaults();
}

TEST(DecodeApiRunTimeDefaults, AFamilyTheTableNeverMeasuredTakesTheNearestFittedFamilysModel) {
  // The table has no entry for the shape's family (group 4), and its model fitted only group 8's
  // tiles: the library asks the model with group 8's tiles, as select does, and runs the chosen
  // tile's group-4 instance, not the family's first compiled kernel (which is another tile).
  const mha::KernelEntry* first = g4_contig_kernel();
  const mha::KernelEntry* bm8 = nullptr;
  for (const auto& k : mha::kernel_registry())
    if (k.traits.kv == "contig" && k.traits.group == 4 && k.traits.bm == 8 &&
        k.traits.dtype == "bf16" && mha::cache_dtype(k.traits) == "bf16" && !k.traits.soft_cap)
      bm8 = &k;
  ASSERT_NE(first, nullptr) << "the CI build has a bf16 group-4 contiguous kernel";
  ASSERT_NE(bm8, nullptr) << "the CI build has a bf16 group-4 contiguous BM-8 kernel";
  ASSERT_NE(first, bm8);
  mha::DefaultsTable t;
  t.gpu_name = "NVIDIA H200";
  t.sm_count = 132;
  mha::KernelTraits g8 = bm8->traits;
  g8.group = 8;
  t.model = mha::testing::slow_blocks_model(
      g8, "decode_bf16_bf16_d128_g8_contig_null_" + mha::tile_id(g8), {1, 8});
  const mha::TileModel m = t.model.tiles[0];  // a copy: the test clears the model below
  mha::DefaultsFamily other;                  // an entry of another family only
  other.family = mha::family_name("bf16", 128, 8, "contig", "null", false);
  other.entries.push_back(
      {mha::half_octave(8), mha::half_octave(4096), false, m.kernel, 1, false, {}});
  t.families.push_back(other);
  const std::string path = write_table("decode_api_other_family.json", t);
  ASSERT_TRUE(mha::load_decode_defaults(path));
  mha::DecodeShape s;  // batch 1 x 8 KV heads, group 4, 5,000 keys
  s.max_keys = 5000;
  const mha::DecodeChoice c = mha::choose_decode(s, 132);
  EXPECT_EQ(c.kernel, bm8);
  EXPECT_EQ(c.partitions, 8);
  EXPECT_FALSE(c.is_tuned);
  EXPECT_NE(c.reason.find("the nearest fitted family's tiles (" + m.family + ")"),
            std::string::npos)
      << c.reason;
  // Without a model the loaded table has nothing for the family: it does not answer (the
  // compiled-in table or the rule does, as without it).
  t.model.tiles.clear();
  const std::string no_model = write_table("decode_api_other_family_no_model.json", t);
  ASSERT_TRUE(mha::load_decode_defaults(no_model));
  const mha::DecodeChoice none = mha::choose_decode(s, 132);
  EXPECT_NE(none.kernel, nullptr);
  EXPECT_EQ(none.reason.find(no_model), std::string::npos) << none.reason;
  mha::unload_decode_defaults();
}

TEST(DecodeApiRunTimeDefaults, ABrokenFileIsRefusedAndTheTableInUseStays) {
  std::string error;
  EXPECT_FALSE(mha::load_decode_defaults("/nonexistent/defaults.json", &error));
  EXPECT_NE(error.find("cannot be read"), std::string::npos) << error;
  const std::string bad = (std::filesystem::temp_directory_path() / "decode_api_bad.json").string();
  std::ofstream(bad) << R"({"schema_version": 1, "gpu_name": "x", "sm_count": 132, "kernels": [],
    "partition_rule": {"alpha": 2, "min_keys_per_partition": 256, "max_partitions": 64, "fitted": true},
    "families": [{"family": "f", "entries": [[2, 2, false, 0, 1, true]]}]})";
  EXPECT_FALSE(mha::load_decode_defaults(bad, &error));
  EXPECT_NE(error.find("kernel index 0 is not in kernels"), std::string::npos) << error;
  EXPECT_EQ(mha::decode_defaults_origin(), "");
}

}  // namespace
