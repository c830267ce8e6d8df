// The split-K combination: a (sequence, query head)'s partial outputs, each normalised by its own
// sum, weighed by their (max, sum) statistics in the same log2 units the decode kernel wrote,
// with the sink counted once. One routine for any number of partials, fixed or planned: run
// fused into the decode kernel (the last block of a row block to finish combines its rows) or
// as the separate reduce launch (one block per query head and sequence).
#pragma once

#include <math.h>

#include "decode_params.cuh"
#include "decode_traits.cuh"
#include "online_softmax.cuh"
#include "ptx.cuh"

namespace mha {

// The separate reduce's block: enough threads that float4 columns times partition slices keep
// many loads in flight at any partition count (8 slices of 32 float4 columns at depth 128).
constexpr int kReduceThreads = 256;
constexpr int kCombineMaxWarps = 32;

// Shared-memory floats combine_row needs for `parts` partials with `threads` threads.
__host__ __device__ inline int combine_scratch_floats(int parts, int threads, int depth) {
  const int slices = threads / (depth / 4);
  return (parts + 3) / 4 * 4 + slices * depth + kCombineMaxWarps;  // float4-aligned slices
}

// Block-wide max / sum of one value per thread through `red` (kCombineMaxWarps floats). Ends
// with a barrier, so `red` and whatever the threads wrote before are safe to reuse after it.
template <bool kMax>
__device__ inline float block_reduce(float v, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int warps = (blockDim.x + 31) / 32;
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < warps; ++w) v = kMax ? fmaxf(v, red[w]) : v + red[w];
  __syncthreads();
  return v;
}

// The whole block combines `parts` partial rows first .. first + parts - 1 of query head `head`
// into output row `out_row`. Statistics are read by all threads at once and reduced across the
// block, so no thread walks the partitions alone; then each thread sums float4 columns over one
// slice of the partitions (loads issued before the math, empty partitions skipped) and the
// slices meet in shared memory. Partials are read through L2 (__ldcg): other blocks of the same
// launch wrote them when fused. blockDim.x must be a multiple of depth / 4.
template <typename Out, bool kHasSink, Fault kFault>
__device__ inline void combine_row(const DecodeParams& p, long long first, int parts, int head,
                                   long long out_row, int depth, float* scratch) {
  // The one deliberate test fault here: weights in natural-exp units against log2 maxima.
  auto weight = [](float m_p, float l_p, float m_total) {
    if constexpr (kFault == Fault::kReduceNaturalExp) return l_p * expf(m_p - exp_base(m_total));
    return partition_weight(m_p, l_p, m_total);
  };
  const int tid = threadIdx.x, threads = blockDim.x;
  const int cols4 = depth / 4, slices = threads / cols4;
  float* w = scratch;                           // [parts]: maxima, then normalised weights
  float* slice_acc = scratch + (parts + 3) / 4 * 4;  // [slices][depth], 16-byte aligned
  float* red = slice_acc + slices * depth;      // [kCombineMaxWarps]

  const float sink = kHasSink ? p.sink_logits[head] * kLog2e : -INFINITY;
  float m = sink;
  for (int i = tid; i < parts; i += threads) {
    w[i] = __ldcg(p.partial_max + first + i);
    m = fmaxf(m, w[i]);
  }
  const float m_total = block_reduce<true>(m, red);
  float denom = 0.f;
  for (int i = tid; i < parts; i += threads) {
    w[i] = weight(w[i], __ldcg(p.partial_sum + first + i), m_total);
    denom += w[i];
  }
  denom = block_reduce<false>(denom, red);  // its barrier also publishes w
  if constexpr (kHasSink) denom += sink_weight(sink, m_total);
  const float inv = denom > 0.f ? 1.f / denom : 0.f;

  const int c4 = tid % cols4, slice = tid / cols4;
  if (slice < slices) {
    const float4* part_out = reinterpret_cast<const float4*>(p.partial_out + first * depth) + c4;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
    for (int i = slice; i < parts; i += slices) {
      const float wi = w[i];
      // An empty partition (no visible keys) weighs 0: its load is predicated off.
      const float4 v = wi != 0.f ? __ldcg(part_out + static_cast<long long>(i) * cols4)
                                 : make_float4(0.f, 0.f, 0.f, 0.f);
      acc.x += wi * v.x;
      acc.y += wi * v.y;
      acc.z += wi * v.z;
      acc.w += wi * v.w;
    }
    *reinterpret_cast<float4*>(slice_acc + slice * depth + 4 * c4) = acc;
  }
  __syncthreads();
  for (int col = tid; col < depth; col += threads) {
    float acc = 0.f;
    for (int s = 0; s < slices; ++s) acc += slice_acc[s * depth + col];
    static_cast<Out*>(p.out)[out_row * depth + col] = ptx::from_float<Out>(acc * inv);
  }
  __syncthreads();  // the scratch is free for the next row
}

// Where the partials of (sequence b, query head h) start and how many there are.
__device__ inline void partial_rows(const DecodeParams& p, int b, int h, long long* first,
                                    int* parts) {
  if (p.seq_splits != nullptr) {
    const SeqSplit split = p.seq_splits[b];
    *parts = split.chunks;
    *first = static_cast<long long>(split.first_partial) * p.heads + static_cast<long long>(h) * split.chunks;
  } else {
    *parts = p.partitions;
    *first = (static_cast<long long>(b) * p.heads + h) * p.partitions;
  }
}

// The separate reduce launch: one block of kReduceThreads per (query head, sequence) and
// combine_scratch_floats(most partials, kReduceThreads, depth) floats of dynamic shared memory.
// Sequences that a plan left in one chunk were written by the decode kernel: skipped.
template <typename Out, bool kHasSink, Fault kFault = Fault::kNone>
__global__ void __launch_bounds__(kReduceThreads) splitk_reduce_kernel(const DecodeParams p, int depth) {
  extern __shared__ __align__(16) float reduce_scratch[];
  const int head = blockIdx.x, b = blockIdx.y;
  long long first = 0;
  int parts = 0;
  partial_rows(p, b, head, &first, &parts);  // the plan is the host's, not the decode grid's
  if (parts <= 1) return;
  ptx::wait_for_prerequisite_grid();  // launched programmatically: the partials are not yet final
  combine_row<Out, kHasSink, kFault>(p, first, parts, head, static_cast<long long>(b) * p.heads + head,
                                     depth, reduce_scratch);
}

}  // namespace mha
