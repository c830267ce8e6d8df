// Host tests for the split code: every kind's text form reads back to the same code, old integer
// codes and labels agree, and text that is no split is refused with what is wrong.
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/split_code.h"

namespace mha {
namespace {

TEST(SplitCode, EveryKindReadsBackFromItsText) {
  for (int code : {1, 7, 64, encode_cluster_split(2), encode_cluster_split(8),
                   encode_split_plan({1, 128}), encode_split_plan({2, 512}),
                   encode_split_plan({kMaxPlanBlocksPerSm, kMaxPlanMinChunkKeys})}) {
    EXPECT_EQ(parse_split_label(split_label(code)), code) << split_label(code);
  }
  EXPECT_EQ(split_label(16), "16");
  EXPECT_EQ(split_label(encode_cluster_split(4)), "cluster4");
  EXPECT_EQ(split_label(encode_split_plan({2, 128})), "plan2x128");
  EXPECT_EQ(split_count(encode_cluster_split(4)), 4);
  EXPECT_EQ(split_count(encode_split_plan({2, 128})), 0);
  EXPECT_TRUE(is_split_plan(parse_split_label("plan1x256")));
  EXPECT_TRUE(is_cluster_split(parse_split_label("cluster8")));
}

TEST(SplitCode, TextThatIsNoSplitIsRefused) {
  for (const char* text :
       {"", "0", "-3", "cluster", "cluster1", "cluster9", "clusterx", "plan", "plan2", "plan0x128",
        "plan2x0", "plan65x128", "plan2x99999999999", "16a", "1048576", " 16"}) {
    try {
      parse_split_label(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + text + "'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace mha
