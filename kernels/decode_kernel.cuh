// The flash-decoding kernel: one block per (partition, KV head × query-row block, sequence), or
// per (KV head × query-row block, plan work item) with a balanced split plan.
// K/V tiles stream through a cp.async multistage pipeline, Q·Kᵀ and P·V run on m16n8k16 tensor
// cores, and the FA2 online softmax (online_softmax.cuh) folds each tile into (max, sum, output).
// The K/V copy path, contiguous or paged, is KvPipeline's (kv_pipeline.cuh).
// Two code paths: without warp split-K the warps share each tile's softmax through shared
// memory; with it each warp owns its own keys and the warps merge once, at the end. Two MMA
// orientations: the block's query heads are the MMA rows (RowsMath, decode_stages.cuh) or, with
// WM = 8, its columns (ColumnsMath, decode_stages_columns.cuh). The body reads as the algorithm;
// each stage is a function of those files.
#pragma once

#include <math.h>

#include <type_traits>

#include "kernels/block_rows.cuh"
#include "kernels/cluster_combine.cuh"
#include "kernels/decode_params.cuh"
#include "kernels/decode_stages.cuh"
#include "kernels/decode_stages_columns.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/fault_injection.cuh"
#include "kernels/kv_pipeline.cuh"
#include "kernels/phase_clock.cuh"
#include "kernels/ptx.cuh"
#include "kernels/splitk_reduce.cuh"

namespace mha {

// One decode block: the K/V pipeline's prologue with the length and Q's rows in flight behind its
// first copies, the key loop, then the epilogue's merge and write (or combine). kSlicedPages: a
// paged cache whose pages are a multiple of 16 rows, looked up one page a 16-row slice
// (decode_kernel below takes that choice once a step).
template <class T, bool kSlicedPages>
__device__ __forceinline__ void decode_block(const DecodeParams& p, unsigned char* smem) {
  using Layout = DecodeSmemLayout<T>;
  constexpr int kBN = T::kBN, kWN = T::kWN;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / T::kWarpsN, warp_n = warp % T::kWarpsN;
  // With a plan the KV heads run along x, so the blocks launch item by item, longest first.
  BlockRows rows = block_rows<T>(p, p.work != nullptr ? blockIdx.x : blockIdx.y);
  const int kv_head = rows.kv_head;

  BlockWork w;
  if (!block_work<T>(p, w)) {  // past this step's plan
    phase::decode_exit(p);
    return;
  }
  // A ragged step's block past its sequence's tokens has nothing to write. Every partition of its
  // rows returns alike, so no cluster barrier or fused-reduce counter waits for it.
  rows = sequence_rows<T>(p, rows, w.b);
  if (T::kMultiToken && rows.count <= 0) {
    phase::decode_exit(p);
    return;
  }
  // Under null/causal masks the length is read after the first tile's copy (contiguous) or page
  // look-up (paged) has gone out (KvPipeline). Windows and chunks read it now: they place the
  // first tile by it.
  constexpr bool kFirstTileEarly = first_tile_before_length<T>();
  if constexpr (!kFirstTileEarly) block_length<T>(p, w, sequence_length(p, w));

  // Prologue: the first K/V copies (or look-ups) go out, then the length's and Q's loads behind
  // them; the pipeline's remaining prologue stages go out around Q's store into shared memory.
  KvPipeline<T, kSlicedPages> kv(p, w.b, smem, tid, kv_head, warp_m, warp_n, lane);
  kv.prologue_start(p, w);
  const int seq_len = kFirstTileEarly ? sequence_length(p, w) : w.n;
  const QChunks<T> q = load_q<T>(p, w.b, rows, tid);
  kv.prologue_with_length(p, w, seq_len);
  // Heads on the MMA rows (decode_stages.cuh) or, for WM = 8, on its columns
  // (decode_stages_columns.cuh): the Q fragments and the running softmax state.
  using Math = std::conditional_t<T::kHeadsAsColumns, ColumnsMath<T>, RowsMath<T>>;
  Math math;
  math.start(q, smem, tid, warp_m, lane);
  const ScoreScaling scaling = score_scaling<T>(p, kv_head);
  kv.prologue_after_q(p, w, seq_len);
  const int num_tiles = block_tiles_read<T>(w);
  kv.prologue_end(p, w, num_tiles);
  const KeyBounds keys = key_bounds<T>(p, rows, w.b, w.key_lo, w.n);

  // Key loop: each landed tile folds into the softmax state while the pipeline refills the stage
  // the previous tile freed.
  const int warp_key0 = warp_n * kWN;  // this warp's first key within a tile
  for (int it = 0; it < num_tiles; ++it) {
    kv.wait_for_tile();
    if (it == 0) phase::decode_cycle(p, phase::kFirstTileCycle);
    kv.refill(p, w, it, num_tiles);
    const auto tile = kv.landed_tile(warp_key0, tid);
    const int tile_key0 = block_tile<T>(p, w, it) * kBN;

    math.fold(smem, tile.k, tile.v, tile_key0 + warp_key0, warp_key0, keys, scaling, warp_m, warp_n,
              lane);
  }

  phase::decode_cycle(p, phase::kLoopEndCycle);
  // The key loop is over: a programmatically launched reduce may start its launch now (it waits
  // for this whole grid to finish before it reads a partial).
  ptx::launch_dependents();
  if constexpr (T::kKvFp8) math.dequantise_output(p.v_scale[kv_head]);  // V's dequantisation

  // Epilogue: drain the pipeline, gather (max, sum, unnormalised output) per row in shared
  // memory, then merge and write.
  kv.drain();
  const MergeArea<T> merge(smem);
  math.to_merge_area(merge, warp_m, warp_n, lane);
  __syncthreads();
  phase::decode_cycle(p, phase::kMergedCycle);
  // A cluster launch (the launcher sets cluster_combine only for one: 2..8 fixed partitions)
  // combines the partitions through distributed shared memory and writes the output.
  if (p.cluster_combine) {
    cluster_combine_rows<T>(p, merge, w, rows, tid);
    phase::decode_exit(p);
    return;
  }
  write_rows<T>(p, merge, w, rows, tid);

  // Fused reduce: the last partition of these rows to finish combines all of them, which saves
  // the second launch. The barrier gathers the block's partial writes and one thread publishes
  // them with a gpu-scope acq_rel atomic (cumulative through the barrier), so the block pays
  // one fence, not one per thread: a fence in every thread cost +2.5 us at 16 partitions
  // (docs/performance.md).
  if (w.chunks > 1 && p.split_counters != nullptr) {
    unsigned* counter = p.split_counters + static_cast<long long>(w.b) * gridDim.y + blockIdx.y;
    // __syncthreads_or broadcasts thread 0's verdict without static shared memory (which would
    // add to the dynamic size the generator checked against the device limit).
    const bool is_last = __syncthreads_or(tid == 0 && ptx::atomic_add_acq_rel_gpu(counter, 1u) ==
                                                          static_cast<unsigned>(w.chunks - 1));
    if (!is_last) {
      phase::decode_exit(p);
      return;
    }
    // The drained pipeline buffers hold the combine's scratch; the launcher falls back to the
    // separate reduce when they are too small for this partition count.
    fused_combine_rows<typename T::Out, T::kHasSink, injected_fault<T>(), T::kMultiToken>(
        p, w.b, rows.first, rows.count, [&](int r) { return block_query_row<T>(rows, r); },
        T::kDepth, reinterpret_cast<float*>(smem + Layout::kPipeline));
    if (tid == 0) *counter = 0;  // ready for the next step (graph replays reuse the counters)
  }
  phase::decode_exit(p);
}

// The kernel takes the page-slicing choice (a step's page size) once, so each choice compiles to
// its own code, with no test of it in the key loop. Taken at every look-up and issue, both paths
// sat interleaved in every paged loop (8,360 SASS instructions against 4,984 contiguous, group 16
// BM 16 BN 128). Split, one paged block streaming 8,192 keys spent 7-23% less time in its key loop
// (mha-tune phases: group 16 BM 16 BN 128 52.0 -> 48.6 us, MQA 41.3 -> 31.7, 32/8 BM 8 72.7 ->
// 64.2), and paged tiles ran 2-3% faster over all their points. (Under ncu, which flushes the
// caches, half the paged kernel's stall samples were `no_instruction` before the split and after
// it: 695 of 1,416 before, 809 of 1,514 after; contiguous 61 of 772.)
template <class T>
__global__ void __launch_bounds__(T::kThreads) decode_kernel(const DecodeParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  phase::decode_start(p);  // the phase stamps compile to nothing outside `phases` builds
  if constexpr (KvCopyShape<T>::kSliceable) {
    if (p.page_size % KvCopyShape<T>::kSliceRows == 0) {
      decode_block<T, true>(p, smem);
      return;
    }
  }
  decode_block<T, false>(p, smem);
}

}  // namespace mha
