// The split-K combination inside the decode launch, through distributed shared memory: with 2..8
// fixed partitions the launcher makes the partitions of one row block a thread-block cluster
// (cluster dimension P along the partition axis). After its key loop each block folds its warps'
// copies into one (max, sum, unnormalised output) per row in its own shared memory; the cluster
// meets once; then block r combines a 1/P share of the rows' elements, reading every block's rows
// in place, and writes the output. No partial goes to global memory, and there is no second
// launch (issue: short steps, where the reduce launch and the partials' round trip cost about
// 3 µs of a 7 µs step).
#pragma once

#include <cooperative_groups.h>
#include <math.h>

#include "kernels/block_rows.cuh"
#include "kernels/decode_params.cuh"
#include "kernels/decode_stages.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/fault_injection.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/phase_clock.cuh"
#include "kernels/ptx.cuh"

namespace mha {

template <class T>
__device__ __forceinline__ void cluster_combine_rows(const DecodeParams& p, const MergeArea<T>& m,
                                                     const BlockWork& w, const BlockRows& rows,
                                                     int tid) {
  namespace cg = cooperative_groups;
  using Out = typename T::Out;
  constexpr int kBM = T::kBM, kDepth = T::kDepth;
  // 1. This block's warp copies folded into copy 0: each output element by the one thread that
  // reads it (in place), then, once every thread has read the copies' statistics, each row's.
  if constexpr (T::kMergeCopies > 1) {
    for (int i = tid; i < rows.count * kDepth; i += T::kThreads) {
      const int row = i / kDepth, col = i % kDepth;
      SoftmaxMerge merged;
#pragma unroll
      for (int c = 0; c < T::kMergeCopies; ++c) merged.take_max(m.max[c * kBM + row]);
#pragma unroll
      for (int c = 0; c < T::kMergeCopies; ++c) {
        const float o_c = m.o[(c * kBM + row) * kDepth + col];
        merged.add_output(rescale(m.max[c * kBM + row], merged.m), o_c);
      }
      m.o[row * kDepth + col] = merged.o;
    }
    __syncthreads();
    if (tid < rows.count) {
      SoftmaxMerge merged;
#pragma unroll
      for (int c = 0; c < T::kMergeCopies; ++c) merged.take_max(m.max[c * kBM + tid]);
#pragma unroll
      for (int c = 0; c < T::kMergeCopies; ++c) {
        const float sum_c = m.sum[c * kBM + tid];
        merged.add_sum(rescale(m.max[c * kBM + tid], merged.m), sum_c);
      }
      m.max[tid] = merged.m;
      m.sum[tid] = merged.l;
    }
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's rows are written and visible to the cluster
  phase::decode_cycle(p, phase::kClusterMetCycle);

  // 2. Block `rank` combines elements rank·threads + tid, stepping parts·threads: each reads the
  // P blocks' (max, sum) of its row, then their outputs, and folds them with the sink once.
  const int parts = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  for (int i = rank * T::kThreads + tid; i < rows.count * kDepth; i += parts * T::kThreads) {
    const int row = i / kDepth, col = i % kDepth;
    float part_max[kMaxClusterPartitions], part_sum[kMaxClusterPartitions],
        part_out[kMaxClusterPartitions];
#pragma unroll
    for (int q = 0; q < kMaxClusterPartitions; ++q) {
      if (q >= parts) break;
      part_max[q] = *cluster.map_shared_rank(m.max + row, q);
      part_sum[q] = *cluster.map_shared_rank(m.sum + row, q);
      part_out[q] = *cluster.map_shared_rank(m.o + row * kDepth + col, q);
    }
    SoftmaxMerge merged;
#pragma unroll
    for (int q = 0; q < kMaxClusterPartitions; ++q)
      if (q < parts) merged.take_max(part_max[q]);
    const QueryRow query = block_query_row<T>(rows, row);
    float sink = -INFINITY;
    if constexpr (T::kHasSink) {
      sink = p.sink_logits[query.head] * kLog2e;
      merged.take_max(sink);
      merged.start_sum_at_sink(sink);
    }
#pragma unroll
    for (int q = 0; q < kMaxClusterPartitions; ++q) {
      if (q >= parts) break;
      // The test faults of the other combines, so the broken kernels fail in this mode too.
      const float wt = injected_fault<T>() == Fault::kReduceNaturalExp
                           ? expf(part_max[q] - exp_base(merged.m))
                           : rescale(part_max[q], merged.m);
      merged.add(wt, part_sum[q], part_out[q]);
      if constexpr (injected_fault<T>() == Fault::kSinkPerPartition && T::kHasSink)
        merged.l += sink_weight(sink, merged.m);
    }
    static_cast<Out*>(p.out)[out_row_offset<T::kMultiToken>(p, w.b, query) + col] =
        ptx::from_float<Out>(merged.normalised());
    if (col == 0) write_lse<T::kMultiToken>(p, w.b, query, merged.m, merged.l);
  }
  phase::decode_cycle(p, phase::kCombinedCycle);
  // The other blocks may still be reading this block's rows: no block leaves before all have
  // combined. Relaxed: this barrier publishes nothing, and each thread's remote loads are done
  // (their values are in its output store, issued before it). cluster.sync() arrives with
  // release, a MEMBAR.ALL.GPU that waited for that output store to reach the L2 on every block's
  // way out (SASS).
  ptx::cluster_sync_relaxed();
}

}  // namespace mha
