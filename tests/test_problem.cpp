// Host tests for problem specs, instantiation, names, step bytes and the built-in suites
// (src/problems/problem.h): errors name the key, and the suites contain docs/design.md's edge
// cases.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.h"
#include "gpu/problem_data.h"
#include "problems/config_schema.h"
#include "problems/json_strict.h"
#include "problems/problem.h"
#include "tests/test_support.h"

namespace mha {
namespace {

KernelTraits traits(const std::string& mask = "null") { return testing::llama_traits(mask); }

// The UsageError message of parsing `spec`, or "" when it parses. The message quotes the spec
// (its origin), so tests look for the key in single quotes.
std::string parse_error(const std::string& spec) {
  try {
    parse_problem_spec(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Problem, ParseErrorsNameTheKey) {
  EXPECT_NE(parse_error("keys=abc").find("'keys'"), std::string::npos);
  EXPECT_NE(parse_error("keys=0").find("'keys'"), std::string::npos);
  EXPECT_NE(parse_error("keys=10:x").find("'keys'"), std::string::npos);
  EXPECT_NE(parse_error("batch=-1").find("'batch'"), std::string::npos);
  EXPECT_NE(parse_error("depth=96").find("'depth'"), std::string::npos);
  EXPECT_NE(parse_error("mask=diagonal").find("'mask'"), std::string::npos);
  EXPECT_NE(parse_error("partitions=two").find("'partitions'"), std::string::npos);
  EXPECT_NE(parse_error("q_std=inf").find("'q_std'"), std::string::npos);
  EXPECT_NE(parse_error("keys").find("key=value"), std::string::npos);
  const std::string unknown = parse_error("keys=10,colour=red");
  EXPECT_NE(unknown.find("'colour'"), std::string::npos);
  EXPECT_NE(unknown.find("partitions"), std::string::npos);  // the known keys are listed
  EXPECT_EQ(parse_error("keys=10,partitions=1:4,window=0"), "");
}

TEST(Problem, ListsAndAutoPartitions) {
  const ProblemSpec s = parse_problem_spec("keys=1:37:4097,partitions=auto:4:8");
  EXPECT_EQ(s.keys, (std::vector<int>{1, 37, 4097}));
  EXPECT_EQ(s.partitions, (std::vector<int>{4, 8}));
  EXPECT_TRUE(s.partitions_auto);
  const ProblemSpec a = parse_problem_spec("keys=5,partitions=auto");
  EXPECT_TRUE(a.partitions.empty());
  EXPECT_TRUE(a.partitions_auto);
  std::string why;
  const auto problems = instantiate(a, traits(), &why);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(problems[0].partitions_auto);
  EXPECT_TRUE(problems[0].partitions.empty());
  EXPECT_EQ(instantiate(parse_problem_spec("keys=5"), traits(), &why)[0].partitions,
            std::vector<int>{1});
}

TEST(Problem, InstantiateFillsFromTheFamilyAndRejectsMismatches) {
  std::string why;
  const auto ps = instantiate(parse_problem_spec("keys=100:200,batch=3"), traits(), &why);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[1].shape.keys, 200);
  EXPECT_EQ(ps[1].lengths, std::vector<int>(3, 200));
  EXPECT_EQ(ps[0].shape.heads, ps[0].shape.kv_heads * 4);
  EXPECT_EQ(ps[0].shape.depth, 128);
  EXPECT_NE(ps[0].shape.name, ps[1].shape.name);

  why.clear();
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=10,depth=64"), traits(), &why).empty());
  EXPECT_NE(why.find("depth"), std::string::npos) << why;
  why.clear();
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=10,mask=window"), traits(), &why).empty());
  EXPECT_NE(why.find("mask"), std::string::npos) << why;
  EXPECT_THROW(instantiate(parse_problem_spec("batch=2"), traits(), &why), UsageError);
}

TEST(Problem, NamesAreStableAndDistinct) {
  std::string why;
  const auto named = instantiate(parse_problem_spec("name=llama,keys=1:4097"), traits(), &why);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].shape.name, "llama_n1");
  EXPECT_EQ(named[1].shape.name, "llama_n4097");
  const auto w1 = instantiate(parse_problem_spec("keys=100,window=1"), traits("window"), &why);
  const auto w2 = instantiate(parse_problem_spec("keys=100,window=2"), traits("window"), &why);
  ASSERT_EQ(w1.size(), 1u);
  EXPECT_NE(problem_name(w1[0]), problem_name(w2[0]));
  EXPECT_EQ(problem_name(w1[0]), w1[0].shape.name);
  // Two long ragged lists of one size and longest: their names shortened to "ragged21x5000" and
  // one stood for both; the list's hash keeps them apart.
  std::string a = "lengths=5000", b = "lengths=5000";
  for (int i = 0; i < 20; ++i)
    a += ":" + std::to_string(100 + i), b += ":" + std::to_string(200 + i);
  const auto ra = instantiate(parse_problem_spec(a), traits(), &why);
  const auto rb = instantiate(parse_problem_spec(b), traits(), &why);
  ASSERT_EQ(ra.size(), 1u);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(ra[0].shape.lengths.rfind("ragged21x5000h", 0), 0u) << ra[0].shape.lengths;
  EXPECT_NE(ra[0].shape.name, rb[0].shape.name);
}

TEST(Problem, QueryLengthsPickTheKernelKindAndNameTheProblem) {
  KernelTraits multi = traits("causal");
  multi.multi_token = true;
  std::string why;
  const ProblemSpec spec = parse_problem_spec("name=spec,keys=100,mask=causal,q_len=1:2:8");
  EXPECT_EQ(spec.q_len, (std::vector<int>{1, 2, 8}));
  // One token on the single-token kernel, several on the multi-token one.
  const auto single = instantiate(spec, traits("causal"), &why);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].shape.q_len, 1);
  EXPECT_EQ(single[0].shape.name, "spec_n100");
  const auto several = instantiate(spec, multi, &why);
  ASSERT_EQ(several.size(), 2u);
  EXPECT_EQ(several[1].shape.q_len, 8);
  EXPECT_EQ(several[1].shape.name, "spec_n100_q8");
  why.clear();
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=100,mask=causal"), multi, &why).empty());
  EXPECT_NE(why.find("several query tokens"), std::string::npos) << why;
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=9,q_len=4"), traits(), &why).empty());
  EXPECT_NE(why.find("q_len 4"), std::string::npos) << why;
  // Unnamed: _q<N> after the keys; the bytes count every token's q and output rows.
  const auto unnamed = instantiate(parse_problem_spec("keys=64,mask=causal,q_len=4"), multi, &why);
  ASSERT_EQ(unnamed.size(), 1u);
  EXPECT_NE(unnamed[0].shape.name.find("_n64_q4_bf16_"), std::string::npos)
      << unnamed[0].shape.name;
  Problem one = unnamed[0];
  one.shape.q_len = 1;
  // Three more tokens of 32 heads, each a bf16 q row in and an output row out.
  EXPECT_DOUBLE_EQ(step_bytes(unnamed[0], 1) - step_bytes(one, 1), 3 * 32 * 128 * (2 + 2.0));
  EXPECT_NE(parse_error("q_len=0").find("'q_len'"), std::string::npos);
  EXPECT_NE(parse_error("q_len=17").find("'q_len'"), std::string::npos);
}

// Throws the UsageError of instantiating `spec` on `t`, or "" when it instantiates.
std::string instantiate_error(const std::string& spec, const KernelTraits& t) {
  try {
    instantiate(parse_problem_spec(spec), t, nullptr);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Problem, RaggedQueryTokensCountEachSequenceOnMultiTokenKernels) {
  KernelTraits multi = traits("causal");
  multi.multi_token = true;
  std::string why;
  const auto ragged =
      instantiate(parse_problem_spec("lengths=9:300:40,mask=causal,q_lens=3:0:8"), multi, &why);
  ASSERT_EQ(ragged.size(), 1u) << why;
  const ProblemShape& s = ragged[0].shape;
  EXPECT_EQ(s.q_len, 8);  // the most any sequence has: the grid's rows
  EXPECT_EQ(s.ragged_q_lens, (std::vector<int>{3, 0, 8}));
  EXPECT_EQ(sequence_q_lens(s), (std::vector<int>{3, 0, 8}));
  EXPECT_EQ(total_query_tokens(s), 11);
  EXPECT_EQ(query_token_starts(s), (std::vector<int>{0, 3, 3, 11}));
  EXPECT_NE(s.name.find("_q8r3-0-8_"), std::string::npos) << s.name;
  EXPECT_TRUE(multi_token_step(s));
  // Bytes: 11 tokens' q and output rows, not 3 x 8, and no K/V of the sequence without a token
  // (300 keys of 8 KV heads, K and V in bf16).
  Problem uniform = ragged[0];
  uniform.shape.ragged_q_lens.clear();
  EXPECT_DOUBLE_EQ(step_bytes(uniform, 1) - step_bytes(ragged[0], 1),
                   13 * 32 * 128 * (2 + 2.0) + 300 * 8 * 128 * 2 * 2.0);
  // Counts of at most one token still need a multi-token kernel (cu_seqlens_q).
  why.clear();
  EXPECT_TRUE(instantiate(parse_problem_spec("lengths=9:30,q_lens=1:0"), traits(), &why).empty());
  EXPECT_NE(why.find("ragged token counts"), std::string::npos) << why;
  const auto ones =
      instantiate(parse_problem_spec("name=r,lengths=9:30,mask=causal,q_lens=1:0"), multi, &why);
  ASSERT_EQ(ones.size(), 1u) << why;
  EXPECT_EQ(ones[0].shape.name, "r_q1r1-0");
  // A long list is named by its size and a hash: distinct lists, distinct names.
  auto long_name = [&](int last) {
    std::string list;
    for (int b = 0; b < 29; ++b) list += "2:";
    return instantiate(parse_problem_spec("batch=30,keys=64,mask=causal,q_lens=" + list +
                                          std::to_string(last)),
                       multi, nullptr)[0]
        .shape.name;
  };
  EXPECT_NE(long_name(3), long_name(4));
  EXPECT_NE(long_name(3).find("_q3r30h"), std::string::npos) << long_name(3);
  // Errors name the key and the fault.
  EXPECT_NE(parse_error("q_lens=1:17").find("'q_lens'"), std::string::npos);
  EXPECT_NE(parse_error("q_lens=1:-1").find("'q_lens'"), std::string::npos);
  EXPECT_NE(parse_error("q_lens=1:x").find("'q_lens'"), std::string::npos);
  EXPECT_NE(instantiate_error("lengths=9:30,q_len=2,q_lens=1:2", multi).find("keep one"),
            std::string::npos);
  EXPECT_NE(instantiate_error("lengths=9:30,q_lens=0:0", multi).find("no sequence has"),
            std::string::npos);
  EXPECT_NE(instantiate_error("lengths=9:30:5,mask=causal,q_lens=1:2", multi)
                .find("2 token counts for a batch of 3"),
            std::string::npos);
}

TEST(Problem, StepBytesCountOnlyVisibleKeys) {
  std::string why;
  const auto null = instantiate(parse_problem_spec("keys=131072,kv_heads=8"), traits(), &why)[0];
  const auto win = instantiate(parse_problem_spec("keys=131072,kv_heads=8,window=4096"),
                               traits("window"), &why)[0];
  const double row = 8.0 * 128 * 2 * 2;    // K and V, 8 KV heads, d128, bf16
  const double qo = 32.0 * 128 * (2 + 2);  // q in, output out
  EXPECT_DOUBLE_EQ(step_bytes(null, 1), 131072 * row + qo);
  EXPECT_DOUBLE_EQ(step_bytes(win, 1), 4096 * row + qo);
  EXPECT_GT(step_bytes(null, 4), step_bytes(null, 1));  // partials written and read back
}

TEST(Problem, Fp8CachesAndSoftCapsAreNamedCountedAndMatchedOnlyWhenSaid) {
  std::string why;
  KernelTraits fp8 = traits();
  fp8.kv_dtype = "e4m3";
  fp8.soft_cap = true;
  // A spec gets an fp8 cache and a cap only by saying so.
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=512"), fp8, &why).empty());
  EXPECT_NE(why.find("kv_dtype e4m3 != bf16"), std::string::npos) << why;
  const auto p = instantiate(parse_problem_spec("keys=131072,kv_heads=8,kv_dtype=e4m3,soft_cap=50"),
                             fp8, &why);
  ASSERT_EQ(p.size(), 1u) << why;
  EXPECT_EQ(p[0].shape.name, "b1_h32_kv8_d128_n131072_bf16_kve4m3_contig_null_cap50");
  EXPECT_EQ(p[0].shape.kv_scale, "tensor");
  const auto head =
      instantiate(parse_problem_spec("keys=8,kv_dtype=e4m3,kv_scale=head,soft_cap=2.5"), fp8, &why);
  ASSERT_EQ(head.size(), 1u) << why;
  EXPECT_EQ(head[0].shape.name, "b1_h32_kv8_d128_n8_bf16_kve4m3h_contig_null_cap2.5");
  // One byte per cached element: half the K/V bytes of a bf16 cache; q and output unchanged.
  EXPECT_DOUBLE_EQ(step_bytes(p[0], 1), 131072 * 8.0 * 128 * 2 + 32.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(visible_kv_bytes(p[0]), 131072 * 8.0 * 128 * 2);
  // A bf16 kernel computes neither; kv_scale needs an fp8 cache.
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=8,kv_dtype=e4m3"), traits(), &why).empty());
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=8,soft_cap=30"), traits(), &why).empty());
  EXPECT_NE(why.find("no soft cap"), std::string::npos) << why;
  EXPECT_TRUE(instantiate(parse_problem_spec("keys=8,kv_scale=head"), traits(), &why).empty());
  EXPECT_NE(why.find("kv_scale head needs an fp8 cache"), std::string::npos) << why;
  EXPECT_THROW(parse_problem_spec("kv_dtype=int8"), UsageError);
  EXPECT_THROW(parse_problem_spec("kv_scale=row"), UsageError);
  EXPECT_THROW(parse_problem_spec("soft_cap=-1"), UsageError);
  EXPECT_THROW(parse_problem_spec("dtype=e4m3"), UsageError);  // q is never fp8
}

// docs/design.md's synthetic fp8 data: sigma_h = 2^((h mod 4) - 1), and 8 sigma onto the format's
// largest value, per tensor (the widest head's sigma) or per KV head.
TEST(Problem, Fp8QuantisationScalesFollowTheContract) {
  ProblemShape s;
  s.kv_heads = 5;
  EXPECT_TRUE(kv_quantisation(s).k_scale.empty());  // a 16-bit cache: no scales
  s.kv_dtype = "e4m3";
  s.kv_scale = "tensor";
  const KvQuantisation tensor = kv_quantisation(s);
  ASSERT_EQ(tensor.k_sigma, (std::vector<float>{0.5f, 1.f, 2.f, 4.f, 0.5f}));
  for (int h = 0; h < 5; ++h) {
    EXPECT_FLOAT_EQ(tensor.k_scale[h], 8 * 4.f / 448);
    // V spreads wider than K: a kernel that swapped their scales would be off by this factor.
    EXPECT_FLOAT_EQ(tensor.v_sigma[h], kVSigmaFactor * tensor.k_sigma[h]);
    EXPECT_FLOAT_EQ(tensor.v_scale[h], kVSigmaFactor * tensor.k_scale[h]);
  }
  s.kv_scale = "head";
  const KvQuantisation head = kv_quantisation(s);
  for (int h = 0; h < 5; ++h) EXPECT_FLOAT_EQ(head.k_scale[h], 8 * head.k_sigma[h] / 448) << h;
  s.kv_dtype = "e5m2";
  EXPECT_FLOAT_EQ(kv_quantisation(s).k_scale[3], 8 * 4.f / 57344);
}

TEST(Problem, EdgeSuiteHasTheContractsEdgeCases) {
  const KernelTraits t = traits("window");
  const auto suite = builtin_suite("edge", t);
  bool window_one = false, window_past_n = false, n_one = false;
  bool parts_past_tiles_short = false, parts_past_tiles_long = false;
  for (const auto& p : suite) {
    const int n = p.max_length();
    EXPECT_EQ(p.lengths.size(), size_t(p.shape.batch)) << p.shape.name;
    if (p.shape.window == 1) window_one = true;
    if (p.shape.window > n && n > 2 * t.bn) window_past_n = true;  // over several key tiles
    if (n == 1) n_one = true;
    const int tiles = (n + t.bn - 1) / t.bn;
    for (int parts : p.partitions) {
      if (parts > tiles && n == 1) parts_past_tiles_short = true;
      if (parts > tiles && n > 16 * t.bn) parts_past_tiles_long = true;
    }
  }
  EXPECT_TRUE(window_one);
  EXPECT_TRUE(window_past_n);
  EXPECT_TRUE(parts_past_tiles_short);  // partitions beyond the key tiles: empty ones
  EXPECT_TRUE(parts_past_tiles_long);
  EXPECT_TRUE(n_one);
  EXPECT_FALSE(builtin_suite("basic", t).empty());
  EXPECT_THROW(builtin_suite("nonsense", t), UsageError);
}

TEST(Problem, MultiTokenSuitesStressTheRows) {
  KernelTraits t = traits("window");
  t.multi_token = true;
  bool past_block = false, past_keys = false, short_window = false, ragged_none = false;
  bool ragged_past_keys = false;
  for (const auto& p : builtin_suite("edge", t)) {
    EXPECT_GE(p.shape.q_len, 2) << p.shape.name;  // a multi-token kernel computes no single token
    if (p.shape.q_len * t.group > t.bm) past_block = true;
    if (p.shape.q_len > p.max_length()) past_keys = true;
    if (p.shape.window > 0 && p.shape.window < p.shape.q_len) short_window = true;
    const std::vector<int>& tokens = p.shape.ragged_q_lens;
    for (size_t b = 0; b < tokens.size(); ++b) {
      ragged_none = ragged_none || tokens[b] == 0;
      ragged_past_keys = ragged_past_keys || tokens[b] > p.lengths[b];
    }
  }
  EXPECT_TRUE(past_block);
  EXPECT_TRUE(past_keys);
  EXPECT_TRUE(short_window);
  EXPECT_TRUE(ragged_none);  // ragged tokens: a sequence with none, and one past its keys
  EXPECT_TRUE(ragged_past_keys);
  for (const auto& p : builtin_suite("basic", t)) EXPECT_GE(p.shape.q_len, 2) << p.shape.name;
  for (const auto& p : builtin_suite("basic", traits())) EXPECT_EQ(p.shape.q_len, 1);
}

TEST(Problem, MalformedProblemFileNamesTheFile) {
  const std::string path = ::testing::TempDir() + "mha_bad_problems.json";
  std::ofstream(path) << "{\"problems\": [ {\"keys\": 10,, } ]";
  try {
    read_problem_file(path);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::ofstream(path) << R"({"problems": [{"keys": [1, 2]}, {"keys": "x"}]})";
  try {
    read_problem_file(path);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("problems[1]"), std::string::npos) << m;
    EXPECT_NE(m.find("keys"), std::string::npos) << m;
  }
  std::remove(path.c_str());
}

// A suite naming its tile space: the families are the tile space's, the problems the suite's, and
// the config hash covers both files (the generator's loader is tested in test_generator.py).
TEST(Problem, SuiteNamingATileSpaceReadsBothFiles) {
  const std::string source = MHA_SOURCE_DIR;
  const std::string tiles = source + "/configs/tiles/ci.json";
  const std::filesystem::path dir = testing::temp_dir("problem") / "suites";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(tiles, dir.parent_path() / "ci_tiles.json",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string suite = (dir / "s.json").string();
  std::ofstream(suite) << R"({"schema_version": 1, "tile_space": "../ci_tiles.json", "suite": )"
                       << read_json_file(source + "/configs/suites/ci.json", "")["suite"].dump()
                       << "}";
  std::vector<std::string> want, got;
  for (const ConfigFamily& f : read_config_families(tiles)) want.push_back(f.name);
  for (const ConfigFamily& f : read_config_families(suite)) got.push_back(f.name);
  EXPECT_EQ(got, want);
  EXPECT_EQ(read_problem_file(suite).size(),
            read_problem_file(source + "/configs/suites/ci.json").size());
  EXPECT_EQ(config_hash_bytes(suite), read_text_file(suite, "") + read_text_file(tiles, ""));
  EXPECT_EQ(config_hash_bytes(tiles), read_text_file(tiles, ""));
  EXPECT_EQ(tile_space_path(suite, "../ci_tiles.json"),
            (dir.parent_path() / "ci_tiles.json").string());

  std::ofstream(suite) << R"({"schema_version": 1, "tile_space": "../absent.json"})";
  try {
    read_config_families(suite);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(suite + ": tile_space: "), std::string::npos) << m;
    EXPECT_NE(m.find((dir.parent_path() / "absent.json").string()), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace mha
