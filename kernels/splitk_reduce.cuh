// The split-K combination: a (sequence, query head)'s partial outputs, each normalised by its own
// sum, weighed by their (max, sum) statistics in the same log2 units the decode kernel wrote,
// with the sink counted once. combine_row handles any number of partials, fixed or planned, in
// the separate reduce launch (one block per query head and sequence); the fused variant (the
// last decode block of a row block combines it) keeps a simpler form, fused_combine_rows.
#pragma once

#include <math.h>

#include "kernels/decode_params.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/fault_injection.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/phase_clock.cuh"
#include "kernels/ptx.cuh"

namespace mha {

// The separate reduce's block: 8 slices of depth / 4 float4 columns (256 threads at depth 128),
// enough loads in flight at any partition count. A fixed 256 at depth 64 left 7 of 8 warps idle
// at P = 2 and cost GPT-OSS's batch 64 (4096 reduce blocks) +56% (docs/performance.md).
constexpr int kReduceSlices = 8;
__host__ __device__ constexpr int reduce_threads(int depth) { return kReduceSlices * depth / 4; }
// Partitions a thread loads before it does any math: one batch covers up to kLoadBatch x slices
// partitions. Rows with more partials than that (MQA's 64, plans' longest sequences) take
// batches of kWideLoadBatch, so up to 64 partials at 8 slices cost one batch, not two; the
// narrow batch stays for the rest, where wide ones would mostly re-read the last partial.
constexpr int kLoadBatch = 4;
constexpr int kWideLoadBatch = 8;

// Shared-memory floats combine_row needs with `threads` threads: the same at any partition count.
__host__ __device__ inline int combine_scratch_floats(int threads, int depth) {
  const int slices = threads / (depth / 4);
  return slices * depth + 2 * slices;
}

// One thread's partitions i = slice, slice + slices, ... < parts folded into its running
// (m, l, acc), kBatch at a time.
template <int kBatch, class ScaleTo>
__device__ __forceinline__ void fold_partials(const DecodeParams& p, const float4* part_out,
                                              long long first, int parts, int slice, int slices,
                                              int cols4, ScaleTo scale_to, float& m, float& l,
                                              float4& acc) {
  for (int i0 = slice; i0 < parts; i0 += kBatch * slices) {
    // The batch's loads come first, unconditional (past `parts` a thread re-reads the last
    // partial, a valid address, and weighs it 0). Guarded (valid ? load : 0), they compiled to
    // predicated loads that ptxas placed each after the previous partial's math: one round trip
    // per partial (SASS; ncu: the reduce of MQA's P = 64 took 9.5 us). Now the statistics load
    // first and the outputs before the weights' exponentials: two round trips per batch. Plain
    // loads: this launch reads partials only after the decode grid completed
    // (wait_for_prerequisite_grid), so no SM holds a stale copy.
    float m_i[kBatch], l_i[kBatch];
    float4 o_i[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = min(i0 + u * slices, parts - 1);
      o_i[u] = part_out[static_cast<long long>(i) * cols4];
      l_i[u] = p.partial_sum[first + i];
      m_i[u] = p.partial_max[first + i];
    }
    // The batch folds in at once: its max first (which needs all its loads), then one weight
    // per partial and one factor for the running state.
    float m_new = m;
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (i0 + u * slices >= parts) m_i[u] = -INFINITY;  // weight 0
      m_new = fmaxf(m_new, m_i[u]);
    }
    const float keep = scale_to(m, m_new);
    l *= keep;
    acc.x *= keep;
    acc.y *= keep;
    acc.z *= keep;
    acc.w *= keep;
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const float w = l_i[u] * scale_to(m_i[u], m_new);
      l += w;
      acc.x += w * o_i[u].x;
      acc.y += w * o_i[u].y;
      acc.z += w * o_i[u].z;
      acc.w += w * o_i[u].w;
    }
    m = m_new;
  }
}

// The whole block combines `parts` partial rows first .. first + parts - 1 of (sequence b, query
// head `head`) into its output row (and its LSE when asked). The block is `slices` groups of
// depth/4 threads; each thread owns one float4 column of the partitions i = slice, slice + slices,
// ... It issues the statistics and output loads of a batch of them (fold_partials) before any math,
// folds them into a running (max, sum, float4 output) state with the online-softmax algebra, and
// the slices meet once in shared memory, merged as every combine merges (SoftmaxMerge). So a small
// P costs one batch, and a large P adds one per kWideLoadBatch x slices partitions, with no
// block-wide reduction before the loads. blockDim.x must be a multiple of depth / 4.
template <typename Out, bool kHasSink, Fault kFault, bool kMultiToken>
__device__ inline void combine_row(const DecodeParams& p, long long first, int parts, int b,
                                   QueryRow row, int depth, float* scratch) {
  const long long out_at = out_row_offset<kMultiToken>(p, b, row);
  // The one deliberate test fault here: weights in natural-exp units against log2 maxima.
  auto scale_to = [](float m_from, float m_to) {
    if constexpr (kFault == Fault::kReduceNaturalExp) return expf(m_from - exp_base(m_to));
    return rescale(m_from, m_to);
  };
  const int tid = threadIdx.x, threads = blockDim.x;
  const int cols4 = depth / 4, slices = threads / cols4;
  const int c4 = tid % cols4, slice = tid / cols4;
  float* slice_acc = scratch;                   // [slices][depth], 16-byte aligned
  float* slice_max = scratch + slices * depth;  // [slices]
  float* slice_sum = slice_max + slices;        // [slices]

  if (slice < slices) {
    const float4* part_out = reinterpret_cast<const float4*>(p.partial_out + first * depth) + c4;
    float m = -INFINITY, l = 0.f;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    if (parts > kLoadBatch * slices)
      fold_partials<kWideLoadBatch>(p, part_out, first, parts, slice, slices, cols4, scale_to, m, l,
                                    acc);
    else
      fold_partials<kLoadBatch>(p, part_out, first, parts, slice, slices, cols4, scale_to, m, l,
                                acc);
    *reinterpret_cast<float4*>(slice_acc + slice * depth + 4 * c4) = acc;
    if (c4 == 0) {
      slice_max[slice] = m;
      slice_sum[slice] = l;
    }
  }
  __syncthreads();
  const float sink = kHasSink ? p.sink_logits[row.head] * kLog2e : -INFINITY;
  for (int col = tid; col < depth; col += threads) {
    SoftmaxMerge merged(sink);
    for (int s = 0; s < slices; ++s) merged.take_max(slice_max[s]);
    if constexpr (kHasSink) merged.start_sum_at_sink(sink);
    for (int s = 0; s < slices; ++s) {
      const float w = scale_to(slice_max[s], merged.m);
      merged.add_sum(w, slice_sum[s]);
      merged.add_output(w, slice_acc[s * depth + col]);
    }
    static_cast<Out*>(p.out)[out_at + col] = ptx::from_float<Out>(merged.normalised());
    if (col == 0) write_lse<kMultiToken>(p, b, row, merged.m, merged.l);
  }
  __syncthreads();  // the scratch is free for the next row
}

// The fused variant's combine of a whole row block (fixed partitions only), by the decode
// block that finished last: every (row, partition) weight once into `scratch`, then one dot
// product over the partitions per output element. It stays this simpler two-pass form because
// combine_row inlined into the decode kernel changed the key loop's register allocation (ptxas
// -v: 168 instead of 204 registers on the s3 tile) and slowed P = 1 steps by up to 1.5x on the
// H200 (docs/performance.md).
__host__ __device__ inline int fused_combine_scratch_floats(int rows, int partitions) {
  return rows * partitions + rows;
}

// Rows first .. first + rows - 1 of sequence b (sequence-local query rows); row_of(r) gives row
// r's (token, head).
template <typename Out, bool kHasSink, Fault kFault, bool kMultiToken, class RowOf>
__device__ inline void fused_combine_rows(const DecodeParams& p, int b, int first_row, int rows,
                                          RowOf row_of, int depth, float* scratch) {
  auto weight = [](float m_p, float l_p, float m_total) {
    if constexpr (kFault == Fault::kReduceNaturalExp) return l_p * expf(m_p - exp_base(m_total));
    return partition_weight(m_p, l_p, m_total);
  };
  const int parts = p.partitions, tid = threadIdx.x, threads = blockDim.x;
  float* w = scratch;                       // [rows][parts]: weights, then normalised
  float* m_total = scratch + rows * parts;  // [rows]
  const long long first =
      (static_cast<long long>(b) * p.heads * query_tokens<kMultiToken>(p) + first_row) *
      static_cast<long long>(parts);
  for (int i = tid; i < rows * parts; i += threads) w[i] = __ldcg(p.partial_max + first + i);
  __syncthreads();
  for (int r = tid; r < rows; r += threads) {
    SoftmaxMerge merged(kHasSink ? p.sink_logits[row_of(r).head] * kLog2e : -INFINITY);
    for (int i = 0; i < parts; ++i) merged.take_max(w[r * parts + i]);
    m_total[r] = merged.m;
  }
  __syncthreads();
  for (int i = tid; i < rows * parts; i += threads)
    w[i] = weight(w[i], __ldcg(p.partial_sum + first + i), m_total[i / parts]);
  __syncthreads();
  for (int r = tid; r < rows; r += threads) {
    SoftmaxMerge merged(m_total[r]);
    if constexpr (kHasSink) merged.start_sum_at_sink(p.sink_logits[row_of(r).head] * kLog2e);
    for (int i = 0; i < parts; ++i) merged.add_weight(w[r * parts + i]);
    const float inv = merged.inverse_sum();
    for (int i = 0; i < parts; ++i) w[r * parts + i] *= inv;
  }
  __syncthreads();
  for (int e = tid; e < rows * depth; e += threads) {
    const int r = e / depth, col = e % depth;
    const float* part_out =
        p.partial_out + (first + static_cast<long long>(r) * parts) * depth + col;
    float acc = 0.f;
#pragma unroll 4
    for (int i = 0; i < parts; ++i)
      acc += w[r * parts + i] * __ldcg(part_out + static_cast<long long>(i) * depth);
    static_cast<Out*>(p.out)[out_row_offset<kMultiToken>(p, b, row_of(r)) + col] =
        ptx::from_float<Out>(acc);
  }
}

// Where the partials of (sequence b, sequence-local query row r) start and how many there are.
template <bool kMultiToken>
__device__ inline void partial_rows(const DecodeParams& p, int b, int r, long long* first,
                                    int* parts) {
  const int rows_per_seq = p.heads * query_tokens<kMultiToken>(p);
  if (p.seq_splits != nullptr) {
    const SeqSplit split = p.seq_splits[b];
    *parts = split.chunks;
    *first = static_cast<long long>(split.first_partial) * rows_per_seq +
             static_cast<long long>(r) * split.chunks;
  } else {
    *parts = p.partitions;
    *first = (static_cast<long long>(b) * rows_per_seq + r) * p.partitions;
  }
}

// Blocks an SM must hold at once, which bounds the reduce's registers. At depth 128 (256 threads)
// 4 blocks, 64 registers (85 unbounded): group 8 at batch 8 (512 reduce blocks) then runs in one
// wave, 13.65 -> 12.50 us at 512 keys and P = 2 on the H200. Other depths keep the compiler's
// allocation: at depth 64, where 512 blocks of 128 threads fit one wave either way, the same
// bound cost MQA's batch-8 split steps 0.75 us (13.79 -> 14.56 us at 8,192 keys and P = 16).
__host__ __device__ constexpr int reduce_min_blocks(int threads) {
  return threads == reduce_threads(128) ? 4 : 1;
}

// The separate reduce launch: one block of kThreads = reduce_threads(depth) per (query row,
// sequence), the sequence's heads x q_len rows along x, and combine_scratch_floats(kThreads, depth)
// floats of dynamic shared memory. Sequences that a plan left in one chunk were written by the
// decode kernel: skipped.
template <typename Out, bool kHasSink, Fault kFault, bool kMultiToken, int kThreads>
__global__ void __launch_bounds__(kThreads, reduce_min_blocks(kThreads))
    splitk_reduce_kernel(const DecodeParams p, int depth) {
  extern __shared__ __align__(16) float reduce_scratch[];
  phase::reduce_stamp(p, phase::kReduceStartNs);
  const int row = blockIdx.x, b = blockIdx.y;
  long long first = 0;
  int parts = 0;
  partial_rows<kMultiToken>(p, b, row, &first,
                            &parts);  // the plan is the host's, not the decode grid's
  // A ragged step's rows past their sequence's last token hold nothing (the decode blocks wrote
  // no partial for them).
  const QueryRow query = query_row<kMultiToken>(p, row);
  if (parts <= 1 || query.token >= sequence_tokens<kMultiToken>(p, b).count) {
    phase::reduce_stamp(p, phase::kReduceExitNs);
    return;
  }
  ptx::wait_for_prerequisite_grid();  // launched programmatically: the partials are not yet final
  phase::reduce_stamp(p, phase::kReduceWaitedNs);
  combine_row<Out, kHasSink, kFault, kMultiToken>(p, first, parts, b, query, depth, reduce_scratch);
  phase::reduce_stamp(p, phase::kReduceExitNs);
}

}  // namespace mha
