// Host tests for the typed errors (src/common/errors.h): a failed CUDA call names the call and the
// error for the user, and keeps the source location apart (a debug detail, not part of the
// message).
#include <gtest/gtest.h>

#include <string>

#include "common/errors.h"

namespace mha {
namespace {

TEST(Errors, CudaErrorMessageNamesNoSourcePath) {
  try {
    MHA_CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "MHA_CUDA_CHECK must throw";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorMemoryAllocation failed"), std::string::npos) << what;
    EXPECT_NE(what.find("out of memory"), std::string::npos) << what;
    EXPECT_EQ(what.find("test_errors"), std::string::npos) << what;
    EXPECT_EQ(what.find(".cpp"), std::string::npos) << what;
    EXPECT_EQ(e.code, cudaErrorMemoryAllocation);
    EXPECT_NE(e.location.find("test_errors.cpp:"), std::string::npos) << e.location;
  }
}

}  // namespace
}  // namespace mha
