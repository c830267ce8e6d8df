#include "src/checks.h"

#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

namespace mha_py {

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::BFloat16:
      return "bf16";
    case c10::ScalarType::Half:
      return "fp16";
    case c10::ScalarType::Float:
      return "fp32";
    case c10::ScalarType::Float8_e4m3fn:
      return "e4m3";
    case c10::ScalarType::Float8_e5m2:
      return "e5m2";
    default:
      return "";
  }
}

void throw_if_failed(const mha::DecodeStatus& status, const char* op) {
  using Code = mha::DecodeStatusCode;
  if (status.ok()) return;
  TORCH_CHECK_VALUE(status.code != Code::kInvalidArgument && status.code != Code::kOverCapacity, op,
                    ": ", status.message);
  TORCH_CHECK_NOT_IMPLEMENTED(status.code != Code::kNotCompiled, op, ": ", status.message,
                              " (mha_tune.kernels() lists what this build compiled)");
  TORCH_CHECK(status.code != Code::kCudaError, op, ": ", status.message, " (CUDA error ",
              static_cast<int>(status.cuda_error), ": ", cudaGetErrorString(status.cuda_error),
              ")");
  TORCH_CHECK(false, op, ": ", status.message, " (status ", static_cast<int>(status.code), ")");
}

void check_device(const at::Tensor& t, const char* op, const char* name, c10::Device device) {
  TORCH_CHECK_VALUE(t.device() == device, op, ": ", name, " must be on ", device,
                    " (the device of q), not ", t.device());
}

void check_dtype(const at::Tensor& t, const char* op, const char* name, const std::string& dtype) {
  TORCH_CHECK_VALUE(dtype_name(t.scalar_type()) == dtype, op, ": ", name, " has dtype ",
                    t.scalar_type(), "; the plan takes ", dtype.empty() ? "another" : dtype);
}

void check_dim(const at::Tensor& t, const char* op, const char* name, int64_t dims) {
  TORCH_CHECK_VALUE(t.dim() == dims, op, ": ", name, " must have ", dims, " dimensions, not ",
                    t.dim(), " (sizes ", t.sizes(), ")");
}

void check_size(const at::Tensor& t, const char* op, const char* name, int64_t dim, int64_t size,
                const char* what) {
  TORCH_CHECK_VALUE(t.size(dim) == size, op, ": ", name, " has ", t.size(dim), " ", what,
                    " (dimension ", dim, " of sizes ", t.sizes(), "); the plan takes ", size);
}

void check_rows_aligned(const at::Tensor& t, const char* op, const char* name) {
  const int64_t inner = t.dim() - 1;
  TORCH_CHECK_VALUE(t.stride(inner) == 1 || t.size(inner) == 1, op, ": ", name,
                    " must be contiguous in its last dimension (strides ", t.strides(), ")");
  const auto address = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  TORCH_CHECK_VALUE(address % 16 == 0, op, ": ", name,
                    " must start at a 16-byte aligned address (a view at an odd offset?)");
  const int64_t element = static_cast<int64_t>(t.element_size());
  for (int64_t d = 0; d < inner; ++d) {
    if (t.size(d) == 1) continue;
    TORCH_CHECK_VALUE(t.stride(d) != 0, op, ": ", name, " dimension ", d,
                      " has stride 0 (an expanded tensor); pass a real buffer");
    TORCH_CHECK_VALUE(t.stride(d) * element % 16 == 0, op, ": ", name, " stride ", t.stride(d),
                      " of dimension ", d, " is not a multiple of 16 bytes");
  }
}

long long stride_ll(const at::Tensor& t, int64_t dim, const char* op, const char* name) {
  // 0 is the library's "packed" default; a size-1 dimension's stride is never multiplied by a
  // non-zero index, so any value computes the same addresses.
  if (t.size(dim) == 1) return 0;
  TORCH_CHECK_VALUE(t.stride(dim) > 0, op, ": ", name, " has a negative or zero stride ",
                    t.stride(dim), " in dimension ", dim);
  return static_cast<long long>(t.stride(dim));
}

int stride_int(const at::Tensor& t, int64_t dim, const char* op, const char* name) {
  const long long s = stride_ll(t, dim, op, name);
  TORCH_CHECK_VALUE(s <= std::numeric_limits<int>::max(), op, ": ", name, " stride ", s,
                    " of dimension ", dim, " does not fit the library's 32-bit stride");
  return static_cast<int>(s);
}

}  // namespace mha_py
