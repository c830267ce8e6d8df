// The one name table of dtypes, KV kinds and masks: every name round-trips, an unknown one is
// refused with the known names, and element sizes follow the dtype.
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/kinds.h"

namespace mha {
namespace {

TEST(Kinds, EveryNameRoundTrips) {
  for (const std::string& n : dtype_names()) EXPECT_EQ(name_of(dtype_from_name(n)), n);
  for (const std::string& n : kv_names()) EXPECT_EQ(name_of(kv_from_name(n)), n);
  for (const std::string& n : mask_names()) EXPECT_EQ(name_of(mask_from_name(n)), n);
  EXPECT_EQ(mask_names(),
            (std::vector<std::string>{"null", "causal", "window", "chunked", "tree"}));
}

TEST(Kinds, UnknownNamesAreRefusedWithTheKnownOnes) {
  try {
    kv_from_name("paged16");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "kv 'paged16' is not one of contig, paged, paged_hnd");
  }
  EXPECT_THROW(dtype_from_name("fp8"), std::invalid_argument);
  EXPECT_THROW(mask_from_name(""), std::invalid_argument);
}

TEST(Kinds, ElementBytesAndPaging) {
  EXPECT_EQ(element_bytes("bf16"), 2);
  EXPECT_EQ(element_bytes("fp16"), 2);
  EXPECT_EQ(element_bytes("fp32"), 4);
  EXPECT_TRUE(is_paged("paged"));
  EXPECT_TRUE(is_paged("paged_hnd"));
  EXPECT_FALSE(is_paged("contig"));
}

}  // namespace
}  // namespace mha
