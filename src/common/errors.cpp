// CUDA error formatting and the sticky-error test.
#include "common/errors.h"

#include <fmt/format.h>

namespace mha {

bool CudaError::is_sticky() const {
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(
      fmt::format("{} failed: {} ({})", call, cudaGetErrorString(code), cudaGetErrorName(code)),
      code, fmt::format("{}:{}", file, line));
}

}  // namespace mha
