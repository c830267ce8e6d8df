// A non-blocking CUDA stream that is destroyed with its owner, even when a point throws.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "common/errors.h"

namespace mha {

class CudaStream {
 public:
  CudaStream() = default;  // none yet: a worker makes its stream once its device is current
  // A stream of the current device.
  static CudaStream on_current_device() {
    CudaStream s;
    MHA_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking));
    return s;
  }
  ~CudaStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  CudaStream(CudaStream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&& o) noexcept {
    if (this != &o) {
      if (stream_ != nullptr) cudaStreamDestroy(stream_);
      stream_ = std::exchange(o.stream_, nullptr);
    }
    return *this;
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace mha
