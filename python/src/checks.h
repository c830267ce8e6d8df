// Argument checks shared by the ops, each message naming the op and the argument as Python
// passes it: a wrong tensor is a ValueError (TORCH_CHECK_VALUE), never a crash or a silent copy.
// A status from the C++ library becomes the matching Python exception.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "api/decode_plan.h"

namespace mha_py {

// The library's dtype name of a torch dtype ("bf16", "fp16", "fp32", "e4m3", "e5m2"), or "".
std::string dtype_name(c10::ScalarType type);

// Raises the status as an exception: invalid arguments and over-capacity steps are ValueError,
// a shape no compiled kernel computes is NotImplementedError (a RuntimeError in Python), a CUDA
// failure RuntimeError. No-op when status.ok().
void throw_if_failed(const mha::DecodeStatus& status, const char* op);

// `t` lives on `device` (the device of q, the first tensor of the op).
void check_device(const at::Tensor& t, const char* op, const char* name, c10::Device device);
// `t` holds `dtype` (a library name; "" accepts nothing, for the messages' sake).
void check_dtype(const at::Tensor& t, const char* op, const char* name, const std::string& dtype);
void check_dim(const at::Tensor& t, const char* op, const char* name, int64_t dims);
void check_size(const at::Tensor& t, const char* op, const char* name, int64_t dim, int64_t size,
                const char* what);
// Innermost dimension contiguous, data pointer and every outer stride of 16-byte multiples: the
// kernels load a head's depth elements in 16-byte vectors.
void check_rows_aligned(const at::Tensor& t, const char* op, const char* name);
// A stride as the library's int field (strides of size-1 dimensions are never used: 0).
int stride_int(const at::Tensor& t, int64_t dim, const char* op, const char* name);
long long stride_ll(const at::Tensor& t, int64_t dim, const char* op, const char* name);

}  // namespace mha_py
