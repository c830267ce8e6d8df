// Host tests for the list syntax of inline specs and CLI lists (src/problems/list_syntax.h): plain
// lists keep their meaning, x/+/pow2 ranges expand inclusively, malformed ranges name the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/errors.h"
#include "problems/list_syntax.h"
#include "problems/problem.h"

namespace mha {
namespace {

std::vector<long long> values(const std::string& text) {
  std::vector<long long> out;
  for (const ListItem& item : expand_list(text, "test"))
    out.push_back(item.is_word ? -1 : item.value);
  return out;
}

std::string error_of(const std::string& spec) {
  try {
    parse_problem_spec(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ListSyntax, PlainListsAreNotRanges) {
  EXPECT_EQ(values("512"), (std::vector<long long>{512}));
  EXPECT_EQ(values("1:8"), (std::vector<long long>{1, 8}));
  EXPECT_EQ(values("1:37:4097"), (std::vector<long long>{1, 37, 4097}));
  EXPECT_EQ(values("[1:8]"), (std::vector<long long>{1, 8}));
}

TEST(ListSyntax, RangesExpandInclusively) {
  EXPECT_EQ(values("512:131072:x4"), (std::vector<long long>{512, 2048, 8192, 32768, 131072}));
  EXPECT_EQ(values("[512:4096:pow2]"), (std::vector<long long>{512, 1024, 2048, 4096}));
  EXPECT_EQ(values("300:1100:pow2"), (std::vector<long long>{512, 1024}));  // powers within
  EXPECT_EQ(values("1000:2000:+250"), (std::vector<long long>{1000, 1250, 1500, 1750, 2000}));
  EXPECT_EQ(values("1:10:x3"), (std::vector<long long>{1, 3, 9}));  // END need not be hit
  EXPECT_EQ(values("5:5:x2"), (std::vector<long long>{5}));
  // A range among plain items; a step takes only the two numbers just before it.
  EXPECT_EQ(values("1:3:512:2048:x2"), (std::vector<long long>{1, 3, 512, 1024, 2048}));
  EXPECT_EQ(values("auto:1:8:x2"), (std::vector<long long>{-1, 1, 2, 4, 8}));
}

TEST(ListSyntax, APowerRangeUpToTheLargestIntegerEnds) {
  // Doubling past 2^62 overflowed and the loop never ended: every power up to END, then stop.
  for (const char* end : {"4611686018427387904", "9223372036854775807"}) {
    const std::vector<long long> v = values(std::string("1:") + end + ":pow2");
    ASSERT_EQ(v.size(), 63u) << end;
    EXPECT_EQ(v.back(), 1LL << 62) << end;
  }
  EXPECT_EQ(values("4096:4096:pow2"), (std::vector<long long>{4096}));
}

TEST(ListSyntax, MalformedRangesAreErrors) {
  for (const char* bad : {"x4", "8:x4", "8:1:x2", "1:8:x1", "1:8:+0", "0:8:x2", "3:3:pow2",
                          "1:2000000000:+1", "[1:8", "1::8", "1:8:x2:x2", "1:8:pow3", "", ":"}) {
    EXPECT_THROW(expand_list(bad, "test"), UsageError) << bad;
  }
}

TEST(ListSyntax, SpecsAndPartitionsUseIt) {
  const ProblemSpec s = parse_problem_spec("keys=[512:131072:pow2],partitions=1:8:x2:auto");
  EXPECT_EQ(s.keys.size(), 9u);
  EXPECT_EQ(s.keys.front(), 512);
  EXPECT_EQ(s.keys.back(), 131072);
  EXPECT_EQ(s.partitions, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_TRUE(s.partitions_auto);
  // `1:8:auto` (README's example) stays the list 1, 8 and the rule's pick.
  const ProblemSpec old = parse_problem_spec("keys=512,partitions=1:8:auto");
  EXPECT_EQ(old.partitions, (std::vector<int>{1, 8}));
  EXPECT_TRUE(old.partitions_auto);
  EXPECT_NE(error_of("keys=512:1:x2").find("'keys'"), std::string::npos);
  EXPECT_NE(error_of("keys=16777216:16777217:+1").find("'keys'"), std::string::npos);  // limit
  EXPECT_NE(error_of("partitions=1:2048:x2").find("'partitions'"), std::string::npos);
  EXPECT_NE(error_of("keys=512,keys=1024").find("twice"), std::string::npos);
  EXPECT_NE(error_of("keys=512,q_std=-1").find("'q_std'"), std::string::npos);
}

}  // namespace
}  // namespace mha
