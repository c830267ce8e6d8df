// The split-K combination: the partitions' normalised partial outputs weighed by their
// (max, sum) statistics, in the same log2 units the decode kernel wrote, with the sink counted
// once. Run either fused into the decode kernel (the last block of a row block to finish
// combines it) or as a separate reduce launch; both call combine_partitions.
#pragma once

#include <math.h>

#include "decode_params.cuh"
#include "decode_traits.cuh"
#include "online_softmax.cuh"
#include "ptx.cuh"

namespace mha {

// Shared-memory floats combine_partitions needs for `rows` query heads.
__host__ __device__ inline int combine_scratch_floats(int rows, int partitions) {
  return rows * partitions + rows;
}

// The whole block combines query heads head0 .. head0 + rows - 1 of sequence b. Every
// (row, partition) weight is computed once into `scratch`, then each output element is one
// independent dot product over the partitions, so the loads overlap instead of forming a chain.
// Partials are read through L2 (__ldcg): other blocks of the same launch wrote them when fused.
template <typename Out, bool kHasSink, Fault kFault>
__device__ inline void combine_partitions(const DecodeParams& p, int b, int head0, int rows,
                                          int depth, float* scratch) {
  // The one deliberate test fault here: weights in natural-exp units against log2 maxima.
  auto weight = [](float m_p, float l_p, float m_total) {
    if constexpr (kFault == Fault::kReduceNaturalExp) return l_p * expf(m_p - exp_base(m_total));
    return partition_weight(m_p, l_p, m_total);
  };
  const int parts = p.partitions, tid = threadIdx.x, threads = blockDim.x;
  float* w = scratch;                      // [rows][parts]: partition weights, then normalised
  float* m_total = scratch + rows * parts;  // [rows]
  const long long first = (static_cast<long long>(b) * p.heads + head0) * parts;
  for (int i = tid; i < rows * parts; i += threads) w[i] = __ldcg(p.partial_max + first + i);
  __syncthreads();
  for (int r = tid; r < rows; r += threads) {
    float m = kHasSink ? p.sink_logits[head0 + r] * kLog2e : -INFINITY;
    for (int i = 0; i < parts; ++i) m = fmaxf(m, w[r * parts + i]);
    m_total[r] = m;
  }
  __syncthreads();
  for (int i = tid; i < rows * parts; i += threads)
    w[i] = weight(w[i], __ldcg(p.partial_sum + first + i), m_total[i / parts]);
  __syncthreads();
  for (int r = tid; r < rows; r += threads) {
    float denom = kHasSink ? sink_weight(p.sink_logits[head0 + r] * kLog2e, m_total[r]) : 0.f;
    for (int i = 0; i < parts; ++i) denom += w[r * parts + i];
    const float inv = denom > 0.f ? 1.f / denom : 0.f;
    for (int i = 0; i < parts; ++i) w[r * parts + i] *= inv;
  }
  __syncthreads();
  for (int e = tid; e < rows * depth; e += threads) {
    const int r = e / depth, col = e % depth;
    const float* part_out = p.partial_out + (first + static_cast<long long>(r) * parts) * depth + col;
    float acc = 0.f;
#pragma unroll 4
    for (int i = 0; i < parts; ++i) acc += w[r * parts + i] * __ldcg(part_out + static_cast<long long>(i) * depth);
    static_cast<Out*>(p.out)[(static_cast<long long>(b) * p.heads + head0 + r) * depth + col] =
        ptx::from_float<Out>(acc);
  }
}

// The separate reduce launch: one block per (query head, sequence), one thread per column,
// combine_scratch_floats(1, partitions) floats of dynamic shared memory.
template <typename Out, bool kHasSink, Fault kFault = Fault::kNone>
__global__ void splitk_reduce_kernel(const DecodeParams p, int depth) {
  extern __shared__ float reduce_scratch[];
  ptx::wait_for_prerequisite_grid();  // launched programmatically: the partials are not yet final
  combine_partitions<Out, kHasSink, kFault>(p, blockIdx.y, blockIdx.x, 1, depth, reduce_scratch);
}

}  // namespace mha
