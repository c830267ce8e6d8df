// Typed errors and the exit codes of docs/design.md: 0 success, 1 verification failure or
// regression, 2 bad usage or configuration, 3 CUDA or environment failure.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace mha {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitUsage = 2,
  kExitEnvironment = 3,
  kExitInterrupted = 130,  // a sweep stopped by Ctrl-C after saving what it measured
};

// Bad input: a config, problem or report file, or a flag. The message names the file, the key
// and what is wrong.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// CUDA or environment failure (no device, a failed call, a sticky error).
// what() names the call and the error only; the source location is kept apart in `location`
// (printed with MHA_DEBUG=1), since users cannot act on a file name of this repository.
struct CudaError : std::runtime_error {
  CudaError(const std::string& what, cudaError_t code, std::string location = "")
      : std::runtime_error(what), code(code), location(std::move(location)) {}
  cudaError_t code;
  std::string location;  // "file:line" of the failed check, or empty
  // Errors after which the context is unusable: the process must end.
  bool is_sticky() const;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace mha

// Checks a CUDA runtime call; throws CudaError naming the call (file and line in `location`).
#define MHA_CUDA_CHECK(call)                                        \
  do {                                                              \
    cudaError_t mha_err_ = (call);                                  \
    if (mha_err_ != cudaSuccess) {                                  \
      ::mha::throw_cuda_error(mha_err_, #call, __FILE__, __LINE__); \
    }                                                               \
  } while (0)
