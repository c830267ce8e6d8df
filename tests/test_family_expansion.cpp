// A spec that leaves out what picks a family expands into every compiled family it fits, and
// says so (src/sweep/family_expansion.h); one that names its family says nothing.
#include <gtest/gtest.h>

#include <set>

#include "sweep/family_expansion.h"
#include "tests/test_support.h"

namespace mha {
namespace {

TEST(FamilyExpansion, ASpecOfSeveralFamiliesIsNamed) {
  const auto kernels = testing::all_kernels();
  std::set<std::string> kinds;  // (dtype, kv) pairs of this build: CI has two or more
  for (const KernelEntry* k : kernels) kinds.insert(k->traits.dtype + "/" + k->traits.kv);
  if (kinds.size() < 2) GTEST_SKIP() << "this build compiles one family";
  ProblemSpec loose = parse_problem_spec("batch=2,keys=100");
  const auto notes = family_expansion_notes({loose}, kernels);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("--problem \"batch=2,keys=100\""), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("leaves out dtype"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("compiled families"), std::string::npos) << notes[0];

  const KernelTraits& t = kernels.front()->traits;
  ProblemSpec named = parse_problem_spec(
      "batch=2,keys=100,dtype=" + t.dtype + ",out_dtype=" + t.out_dtype +
      ",kv_dtype=" + cache_dtype(t) + ",kv=" + t.kv + ",mask=" + t.mask +
      ",sink=" + (t.has_sink ? "1" : "0") + ",depth=" + std::to_string(t.depth) +
      ",heads=" + std::to_string(8 * t.group) + ",kv_heads=8" + (t.soft_cap ? ",soft_cap=30" : ""));
  EXPECT_TRUE(family_expansion_notes({named}, kernels).empty());
}

}  // namespace
}  // namespace mha
