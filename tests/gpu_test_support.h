// Shared by the GPU tests: skip with a clear message where there is no CUDA device.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

inline bool has_cuda_device() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

#define MHA_REQUIRE_GPU()                                                       \
  do {                                                                          \
    if (!has_cuda_device()) GTEST_SKIP() << "no CUDA device: GPU test skipped"; \
  } while (0)
