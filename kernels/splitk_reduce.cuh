// The split-K combination: the partitions' normalised partial outputs weighed by their
// (max, sum) statistics, in the same log2 units the decode kernel wrote, with the sink counted
// once. Run either fused into the decode kernel (the last block of a head to finish combines
// it) or as a separate reduce launch.
#pragma once

#include <math.h>

#include "decode_params.cuh"
#include "decode_traits.cuh"
#include "online_softmax.cuh"
#include "ptx.cuh"

namespace mha {

// Writes output columns col0, col0 + stride, ... of (sequence b, query head). Partials are read
// through L2 (__ldcg): other blocks wrote them in this same launch when the reduce is fused.
template <typename Out, bool kHasSink, Fault kFault>
__device__ inline void combine_partitions(const DecodeParams& p, int b, int head, int depth,
                                          int col0, int stride) {
  // The one deliberate test fault here: weights in natural-exp units against log2 maxima.
  auto weight = [](float m_p, float l_p, float m_total) {
    if constexpr (kFault == Fault::kReduceNaturalExp) return l_p * expf(m_p - exp_base(m_total));
    return partition_weight(m_p, l_p, m_total);
  };
  const long long first = (static_cast<long long>(b) * p.heads + head) * p.partitions;
  const float sink = kHasSink ? p.sink_logits[head] * kLog2e : -INFINITY;
  float m_total = sink;
  for (int i = 0; i < p.partitions; ++i) m_total = fmaxf(m_total, __ldcg(p.partial_max + first + i));
  float denom = kHasSink ? sink_weight(sink, m_total) : 0.f;
  for (int i = 0; i < p.partitions; ++i)
    denom += weight(__ldcg(p.partial_max + first + i), __ldcg(p.partial_sum + first + i), m_total);
  for (int col = col0; col < depth; col += stride) {
    float acc = 0.f;
    for (int i = 0; i < p.partitions; ++i) {
      const float w = weight(__ldcg(p.partial_max + first + i), __ldcg(p.partial_sum + first + i), m_total);
      acc += w * __ldcg(p.partial_out + (first + i) * depth + col);
    }
    const float o = denom > 0.f ? acc / denom : 0.f;
    static_cast<Out*>(p.out)[(static_cast<long long>(b) * p.heads + head) * depth + col] =
        ptx::from_float<Out>(o);
  }
}

// The separate reduce launch: one block per (query head, sequence), one thread per column.
template <typename Out, bool kHasSink, Fault kFault = Fault::kNone>
__global__ void splitk_reduce_kernel(const DecodeParams p, int depth) {
  combine_partitions<Out, kHasSink, kFault>(p, blockIdx.y, blockIdx.x, depth, threadIdx.x, blockDim.x);
}

}  // namespace mha
