// The online-softmax algebra, written once for the decode kernel, the split-K reduce and the
// host tests. States are (m, l): m the running max in log2 units (score * log2 e), l the sum of
// 2^(s - m). An empty state is (-inf, 0); every operation keeps it NaN-free.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers
#include <math.h>

#include "kernels/decode_params.cuh"

namespace mha {

constexpr float kLog2e = 1.4426950408889634f;

// The exponent base to subtract: an empty max (-inf) becomes 0 so 2^(-inf - base) = 0.
__host__ __device__ inline float exp_base(float m) { return m == -INFINITY ? 0.f : m; }

// 2^x for every weight and factor the kernels compute: the MUFU instruction alone
// (ex2.approx.ftz). exp2f wraps it in a compare and two predicated multiplies to return results
// below 2^-126 as denormals: 3 instructions per score in the key loop, 24 of MQA's 168 a tile
// (SASS), and as many per partial in the merges and the reduce. A weight or factor below 2^-126
// multiplies a sum of at most 2^31 weights of at most 2^8 each, so what it drops is below 2^-87
// of a total that holds a weight of at least 1 (the reference key's, or the largest partial's),
// and it flushes to 0. The host (the tests) computes exp2f.
__host__ __device__ inline float exp2_weight(float x) {
#ifdef __CUDA_ARCH__
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

// Factor that moves a sum taken relative to m_old onto m_new (0 for an empty old state).
__host__ __device__ inline float rescale(float m_old, float m_new) {
  return exp2_weight(m_old - exp_base(m_new));
}

// Lazy rescaling: a row's reference max m moves only when a tile's max exceeds it by more than
// kRescaleSlack, so most tiles skip rescaling the output and the sum (one multiply per output
// element per tile; with d64 and 16-key warp tiles, 40 of MQA's 270 instructions a tile, SASS).
// Any reference works as long as the sum and the output use the same one: 2^(s - m) then stays
// at most 2^kRescaleSlack = 256, exact in fp32 and of the same relative precision in bf16 and
// fp16 (max 65504) as values below 1. The max written with a partial is the reference.
constexpr float kRescaleSlack = 8.f;
__host__ __device__ inline bool needs_new_max(float m_ref, float tile_max) {
  return tile_max > m_ref + kRescaleSlack;  // m_ref = -inf: any visible key moves it
}

// Weight of one partition's normalised output in the final combination: l_p * 2^(m_p - M).
__host__ __device__ inline float partition_weight(float m_p, float l_p, float m_total) {
  return l_p * exp2_weight(m_p - exp_base(m_total));
}

// The sink's share of the denominator, 2^(sigma - M), with sigma in log2 units (-inf: none).
__host__ __device__ inline float sink_weight(float sink_log2, float m_total) {
  return exp2_weight(sink_log2 - exp_base(m_total));
}

// The merge of partial states (m_i, l_i, o_i), one output element each, as every combine folds
// them: the epilogue's warp copies (write_rows), the cluster's partitions, the separate reduce's
// slices and the fused reduce's partitions. The parts' max (and the sink's) is the reference m;
// each part's sum and output move onto it (weight 2^(m_i - m), a normalised partial's times its
// l_i); the sink adds its weight once; the output is o / l. Each combine loads its parts its own
// way and runs these steps in its own order: the sink's max first or last, its weight added
// after the parts' merge (write_rows: the partial path shares that merge) or before it, the
// output divided (o / l) or its weights normalised first (the fused reduce); written as one
// order, those combines compiled to other instructions.
struct SoftmaxMerge {
  // o before l: so the separate reduce's slice loop keeps the registers it had as two locals
  // (SASS; l first swapped them, and in the cluster's combine this order swaps two moves).
  float m = -INFINITY;  // the reference max
  float o = 0.f;        // the output element, relative to m
  float l = 0.f;        // the sum, relative to m

  SoftmaxMerge() = default;
  // The reference starts at m_start: the sink's max (-inf: none), its weight added once the
  // parts' maxima are in, or a reference the parts' maxima gave already.
  __host__ __device__ explicit SoftmaxMerge(float m_start) : m(m_start) {}

  // First pass: a part's max (or the sink's) into the reference.
  __host__ __device__ void take_max(float m_i) { m = fmaxf(m, m_i); }
  // Second pass: a part's sum and output with weight `wt` onto the reference (rescale(m_i, m);
  // a test fault weighs otherwise). Read from shared memory, or held by different threads, each
  // apart (add_sum, add_output): with both read before either add, write_rows and the separate
  // reduce were scheduled otherwise (SASS).
  __host__ __device__ void add(float wt, float l_i, float o_i) {
    add_sum(wt, l_i);
    add_output(wt, o_i);
  }
  __host__ __device__ void add_sum(float wt, float l_i) { l += l_i * wt; }
  __host__ __device__ void add_output(float wt, float o_i) { o += o_i * wt; }
  // A part's weight onto the reference computed already (a normalised partial's l_i · 2^(m_i - m)).
  __host__ __device__ void add_weight(float w_i) { l += w_i; }
  // The sink whose max is in the reference already: the sum starts at its weight.
  __host__ __device__ void start_sum_at_sink(float sink_log2) { l = sink_weight(sink_log2, m); }
  // The sink after the parts' merge: the state moves onto the new max, then the sink's weight.
  __host__ __device__ void add_sink(float sink_log2) {
    const float m_total = fmaxf(m, sink_log2);
    const float wt = rescale(m, m_total);
    l = l * wt + sink_weight(sink_log2, m_total);
    o *= wt;
    m = m_total;
  }
  // The output element, normalised (0 without a visible key), or what normalises each weight.
  __host__ __device__ float normalised() const { return l > 0.f ? o / l : 0.f; }
  __host__ __device__ float inverse_sum() const { return l > 0.f ? 1.f / l : 0.f; }
};

constexpr float kLn2 = 0.6931471805599453f;

// A row's finished state as the optional log-sum-exp output (DecodeParams::lse): with l relative
// to any reference m (lazy rescaling's included), ln sum_j e^score_j = ln 2 · (m + log2 l).
template <bool kMultiToken>
__host__ __device__ inline void write_lse(const DecodeParams& p, int b, QueryRow row, float m,
                                          float l) {
  if (p.lse != nullptr)
    p.lse[(static_cast<long long>(sequence_tokens<kMultiToken>(p, b).first) + row.token) * p.heads +
          row.head] = l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
}

}  // namespace mha
