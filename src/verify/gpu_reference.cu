// Host side of the fp32 GPU reference (kernels/reference_kernel.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common/kinds.h"
#include "gpu/device_buffer.h"
#include "kernels/reference_kernel.cuh"
#include "verify/reference.h"

namespace mha {

std::vector<double> gpu_reference(const Problem& problem, const ProblemData& data,
                                  std::vector<double>* lse) {
  const ProblemShape& s = problem.shape;
  const int max_len = std::max(1, problem.max_length());
  // The grid's rows give every sequence q_len tokens (the scores' scratch is laid out so); the
  // output and LSE hold the step's own tokens.
  const size_t grid_rows = size_t(s.batch) * s.q_len * s.heads;
  const size_t rows = size_t(total_query_tokens(s)) * s.heads;
  const size_t out_elems = rows * s.depth;
  DeviceBuffer out(out_elems * sizeof(float));
  DeviceBuffer scores(grid_rows * max_len * sizeof(float));
  DecodeParams p = data.params(0, 1);
  p.out = out.get();
  DeviceBuffer lse_rows(lse != nullptr ? rows * sizeof(float) : 0);
  p.lse = lse != nullptr ? lse_rows.get<float>() : nullptr;
  const dim3 grid(s.heads, s.batch * s.q_len);
  const int group = s.heads / s.kv_heads;
  auto run = [&](auto q_tag, auto kv_tag) {
    using Q = decltype(q_tag);
    using Kv = decltype(kv_tag);
    reference_attention_kernel<Q, Kv, float><<<grid, kReferenceThreads>>>(
        p, static_cast<const Kv*>(data.k_logical()), static_cast<const Kv*>(data.v_logical()),
        max_len, s.depth, group, mask_from_name(s.mask), s.has_sink, scores.get<float>());
  };
  auto with_kv = [&](auto q_tag) {
    switch (dtype_from_name(s.kv_dtype)) {
      case Dtype::kE4m3:
        run(q_tag, __nv_fp8_e4m3{});
        break;
      case Dtype::kE5m2:
        run(q_tag, __nv_fp8_e5m2{});
        break;
      default:
        run(q_tag, decltype(q_tag){});
        break;  // a 16-bit cache holds q's dtype
    }
  };
  if (dtype_from_name(s.dtype) == Dtype::kBf16)
    with_kv(__nv_bfloat16{});
  else
    with_kv(__half{});
  MHA_CUDA_CHECK(cudaGetLastError());
  std::vector<float> host(out_elems);
  MHA_CUDA_CHECK(
      cudaMemcpy(host.data(), out.get(), out_elems * sizeof(float), cudaMemcpyDeviceToHost));
  if (lse != nullptr) {
    std::vector<float> host_lse(rows);
    MHA_CUDA_CHECK(
        cudaMemcpy(host_lse.data(), p.lse, rows * sizeof(float), cudaMemcpyDeviceToHost));
    lse->assign(host_lse.begin(), host_lse.end());
  }
  return std::vector<double>(host.begin(), host.end());
}

}  // namespace mha
