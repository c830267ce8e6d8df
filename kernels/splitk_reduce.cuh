// The split-K reduce pass: combines the partitions' normalised partial outputs with their
// (max, sum) statistics, in the same log2 units the decode kernel wrote, and counts the sink once.
#pragma once

#include <math.h>

#include "decode_params.cuh"
#include "decode_traits.cuh"
#include "online_softmax.cuh"
#include "ptx.cuh"

namespace mha {

// One block per (query head, sequence); one thread per output column.
template <typename Out, bool kHasSink, Fault kFault = Fault::kNone>
__global__ void splitk_reduce_kernel(const DecodeParams p, int depth) {
  // The one deliberate test fault here: weights in natural-exp units against log2 maxima.
  auto weight = [](float m_p, float l_p, float m_total) {
    if constexpr (kFault == Fault::kReduceNaturalExp) return l_p * expf(m_p - exp_base(m_total));
    return partition_weight(m_p, l_p, m_total);
  };
  const int head = blockIdx.x, b = blockIdx.y;
  const long long first = (static_cast<long long>(b) * p.heads + head) * p.partitions;
  float m_total = kHasSink ? p.sink_logits[head] * kLog2e : -INFINITY;
  for (int i = 0; i < p.partitions; ++i) m_total = fmaxf(m_total, p.partial_max[first + i]);
  float denom = kHasSink ? sink_weight(p.sink_logits[head] * kLog2e, m_total) : 0.f;
  for (int i = 0; i < p.partitions; ++i)
    denom += weight(p.partial_max[first + i], p.partial_sum[first + i], m_total);
  for (int col = threadIdx.x; col < depth; col += blockDim.x) {
    float acc = 0.f;
    for (int i = 0; i < p.partitions; ++i) {
      const float w = weight(p.partial_max[first + i], p.partial_sum[first + i], m_total);
      acc += w * p.partial_out[(first + i) * depth + col];
    }
    const float o = denom > 0.f ? acc / denom : 0.f;
    static_cast<Out*>(p.out)[(static_cast<long long>(b) * p.heads + head) * depth + col] =
        ptx::from_float<Out>(o);
  }
}

}  // namespace mha
