// Host tests for output checking (src/verify/verification.h): NaN/Inf fail, all-zero references,
// the relative L2 and max-abs thresholds, per-dtype tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "verify/verification.h"

namespace mha {
namespace {

const Tolerance kTol{1e-2, 4e-2};

TEST(Verification, NonFiniteFails) {
  const std::vector<double> ref{1, 2, 3, 4};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY}) {
    const ErrorReport r = compare_outputs({1, 2, bad, 4}, ref, kTol);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.non_finite, 1);
    EXPECT_EQ(r.worst_index, 2);
    EXPECT_FALSE(r.reason.empty());
  }
  EXPECT_FALSE(compare_outputs(std::vector<float>(4, NAN), ref, kTol).passed);  // never written
}

TEST(Verification, ExactMatchAndZeroReferencePass) {
  EXPECT_TRUE(compare_outputs({1, -2, 3}, {1, -2, 3}, kTol).passed);
  const ErrorReport zero = compare_outputs({0, 0, 0}, {0, 0, 0}, kTol);
  EXPECT_TRUE(zero.passed) << zero.reason;
  EXPECT_EQ(zero.rel_l2, 0);
  EXPECT_FALSE(compare_outputs({0, 0.5f, 0}, {0, 0, 0}, kTol).passed);  // zero ref, wrong out
  // Zero ref, every element a little off (under max_abs, not under rel L2 taken absolutely).
  const ErrorReport spread =
      compare_outputs(std::vector<float>(100, 0.03f), std::vector<double>(100, 0.0), kTol);
  EXPECT_FALSE(spread.passed);
  EXPECT_NEAR(spread.rel_l2, 0.3, 1e-6);
  EXPECT_FALSE(compare_outputs({1, 2}, {1, 2, 3}, kTol).passed);  // size mismatch
}

TEST(Verification, RelativeL2AtTheThreshold) {
  // ref = 1 everywhere; out = 1 + e everywhere: rel L2 = e, max rel = e.
  const std::vector<double> ref(1000, 1.0);
  const Tolerance tol{1e-2, 1.0};
  const ErrorReport below = compare_outputs(std::vector<float>(1000, 1.0099f), ref, tol);
  EXPECT_TRUE(below.passed) << below.reason;
  EXPECT_NEAR(below.rel_l2, 0.0099, 1e-6);
  const ErrorReport above = compare_outputs(std::vector<float>(1000, 1.0101f), ref, tol);
  EXPECT_FALSE(above.passed);
  EXPECT_NEAR(above.rel_l2, 0.0101, 1e-6);
  EXPECT_NE(above.reason.find("L2"), std::string::npos) << above.reason;
}

TEST(Verification, MaxAbsCatchesOneBadElement) {
  // One element off by 0.5 of max |ref| hides in the L2 norm of 10^4 elements but not in max abs.
  std::vector<double> ref(10000, 1.0);
  std::vector<float> out(10000, 1.f);
  out[1234] = 1.5f;
  const ErrorReport r = compare_outputs(out, ref, kTol);
  EXPECT_LT(r.rel_l2, kTol.rel_l2);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.worst_index, 1234);
  EXPECT_NEAR(r.max_abs, 0.5, 1e-6);
}

TEST(Verification, TolerancePerDtype) {
  const Tolerance bf16 = tolerance_for("bf16", "bf16"), fp16 = tolerance_for("fp16", "fp16");
  const Tolerance fp16_f32 = tolerance_for("fp16", "fp32"),
                  fp16_bf16 = tolerance_for("fp16", "bf16");
  EXPECT_LT(fp16.rel_l2, bf16.rel_l2);  // fp16 keeps 3 more mantissa bits
  EXPECT_LT(fp16.max_abs, bf16.max_abs);
  EXPECT_LE(fp16_f32.rel_l2, fp16.rel_l2);
  EXPECT_GE(fp16_bf16.rel_l2, bf16.rel_l2);  // a bf16 output adds bf16 rounding
  EXPECT_GE(fp16_bf16.max_abs, bf16.max_abs);
  // bf16 rounding (2^-9 relative) must pass; 2^-5 must not.
  for (const Tolerance& t : {bf16, fp16, fp16_f32, fp16_bf16}) {
    EXPECT_GT(t.rel_l2, 0);
    EXPECT_LT(t.rel_l2, 0.03);
  }
  EXPECT_GT(bf16.rel_l2, std::ldexp(1.0, -9));
}

}  // namespace
}  // namespace mha
