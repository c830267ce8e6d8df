// Host tests for the seeded length mixes (src/problems/length_mix.h) and the problem specs that use
// them: the same seed gives the same batch, each mix has the shape its name promises, names are
// stable, and misuse names the key. tests/test_peers.py checks that Python draws the same lengths.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <numeric>

#include "common/errors.h"
#include "problems/length_mix.h"
#include "problems/problem.h"
#include "tests/test_support.h"

namespace mha {
namespace {

constexpr int kMax = 1 << 24;

TEST(LengthMix, SeededAndShapedAsNamed) {
  EXPECT_EQ(mix_lengths("lognormal", 64, 4096, 1, kMax, "t"),
            mix_lengths("lognormal", 64, 4096, 1, kMax, "t"));
  EXPECT_NE(mix_lengths("lognormal", 64, 4096, 1, kMax, "t"),
            mix_lengths("lognormal", 64, 4096, 2, kMax, "t"));
  EXPECT_EQ(mix_lengths("uniform", 5, 700, 1, kMax, "t"), std::vector<int>(5, 700));

  const auto chat = mix_lengths("lognormal", 2001, 4096, 3, kMax, "t");
  std::vector<int> sorted = chat;
  std::nth_element(sorted.begin(), sorted.begin() + 1000, sorted.end());
  EXPECT_NEAR(sorted[1000], 4096, 400);                              // median = keys
  EXPECT_GT(*std::max_element(chat.begin(), chat.end()), 4 * 4096);  // a long tail

  const auto one = mix_lengths("one_long", 32, 65536, 1, kMax, "t");
  EXPECT_EQ(one[0], 65536);
  for (size_t i = 1; i < one.size(); ++i) {
    EXPECT_GE(one[i], 256);
    EXPECT_LE(one[i], 1024);
  }
  for (int n : mix_lengths("many_long", 100, 8192, 1, kMax, "t")) {
    EXPECT_GE(n, 4096);
    EXPECT_LE(n, 8192);
  }
  for (int n : mix_lengths("lognormal", 500, 3, 1, kMax, "t")) EXPECT_GE(n, 1);  // never 0
  for (int n : mix_lengths("lognormal", 500, 1 << 23, 1, kMax, "t")) EXPECT_LE(n, kMax);
}

TEST(LengthMix, SpecsNameTheirMixStably) {
  std::string why;
  const KernelTraits t = testing::llama_traits("null");
  const auto ps = instantiate(parse_problem_spec("mix=one_long,batch=32,keys=4096:65536"), t, &why);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[1].shape.lengths, "one_long32x65536s1");
  EXPECT_EQ(ps[1].shape.keys, 65536);
  EXPECT_EQ(ps[1].shape.batch, 32);
  EXPECT_EQ(ps[1].lengths, mix_lengths("one_long", 32, 65536, 1, kMax, "t"));
  EXPECT_EQ(ps[1].shape.ragged_lengths, ps[1].lengths);  // reports carry every length
  EXPECT_NE(ps[1].shape.name.find("_one_long32x65536s1"), std::string::npos) << ps[1].shape.name;
  const auto named = instantiate(
      parse_problem_spec("name=chat,mix=lognormal,batch=8,keys=4096,mix_seed=5"), t, &why);
  EXPECT_EQ(named[0].shape.name, "chat_n4096");
  EXPECT_EQ(named[0].shape.lengths, "lognormal8x4096s5");
}

TEST(LengthMix, MisuseNamesTheKey) {
  auto error = [](const std::string& spec) {
    try {
      std::string why;
      instantiate(parse_problem_spec(spec), testing::llama_traits("null"), &why);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("mix=gamma,batch=2,keys=5").find("'mix'"), std::string::npos);
  EXPECT_NE(error("mix=lognormal,keys=5").find("'batch'"), std::string::npos);
  EXPECT_NE(error("mix=lognormal,batch=2").find("'keys'"), std::string::npos);
  EXPECT_NE(error("mix=lognormal,batch=2,keys=5,lengths=3:4").find("'lengths'"), std::string::npos);
  EXPECT_NE(error("mix=lognormal,batch=2,keys=5,mix_seed=-1").find("'mix_seed'"),
            std::string::npos);
}

}  // namespace
}  // namespace mha

namespace mha {
namespace {

TEST(LengthMix, ALognormalDrawPastTheIntRangeIsClampedNotWrapped) {
  // keys * e^z past 2^31 wrapped to a negative int, then clamped to 1 key.
  const std::vector<int> v = mix_lengths("lognormal", 1000, 1 << 30, 1, INT32_MAX, "test");
  int at_most = 0;
  for (int n : v) {
    EXPECT_GT(n, 1 << 20) << "a wrapped draw";  // e^z > 2^-10 for every draw of 1000
    at_most += n == INT32_MAX;
  }
  EXPECT_GT(at_most, 100);  // e^z > 2 about a quarter of the time
}

}  // namespace
}  // namespace mha
