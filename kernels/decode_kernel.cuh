// The flash-decoding kernel: one block per (partition, KV head × query-row block, sequence), or
// per (KV head × query-row block, plan work item) with a balanced split plan.
// K/V tiles stream through a cp.async multistage pipeline, Q·Kᵀ and P·V run on m16n8k16 tensor
// cores, and the FA2 online softmax (online_softmax.cuh) folds each tile into (max, sum, output).
// Two code paths: without warp split-K the warps share each tile's softmax through shared
// memory; with it each warp owns its own keys and the warps merge once, at the end.
#pragma once

#include <math.h>

#include "decode_params.cuh"
#include "decode_traits.cuh"
#include "kv_operand.cuh"
#include "masks.cuh"
#include "online_softmax.cuh"
#include "ptx.cuh"
#include "splitk_reduce.cuh"

namespace mha {

// Byte offsets of the shared-memory regions of one instance.
template <class T>
struct DecodeSmemLayout {
  static constexpr int kPipeline = 0;  // stages × (K tile, V tile); later the epilogue merge area
  static constexpr int kQ =
      T::kPipelineBytes > T::kMergeBytes ? T::kPipelineBytes : T::kMergeBytes;
  static constexpr int kP = kQ + T::kQBytes;
  static constexpr int kRowMax = kP + T::kPBytes;
  static constexpr int kRowSum = kRowMax + T::kWarpsN * T::kBM * 4;
  static_assert((T::kRowStatBytes == 0 ? kP + T::kPBytes : kRowSum + T::kWarpsN * T::kBM * 4) ==
                    T::kSmemBytes,
                "layout must match DecodeTraits::kSmemBytes");
};

// Element offset of 16-byte chunk c of row r in a [rows][depth] tile; XOR-swizzling the chunk
// with the row spreads the 8 rows an ldmatrix reads over all 32 banks.
template <int kChunksPerRow>
__device__ __forceinline__ int swizzled(int r, int c) {
  return r * kChunksPerRow * 8 + ((c ^ (r & 7)) * 8);
}

template <class T>
__global__ void __launch_bounds__(T::kThreads) decode_kernel(const DecodeParams p) {
  using Elem = typename T::Elem;
  using Out = typename T::Out;
  using Layout = DecodeSmemLayout<T>;
  constexpr int kBM = T::kBM, kBN = T::kBN, kBK = T::kBK, kWM = T::kWM, kWN = T::kWN;
  constexpr int kDepth = T::kDepth, kCpr = T::kChunksPerRow;
  constexpr int kMTiles = kWM / 16;
  constexpr int kNTiles = kWN / 8;       // score columns of one warp, in 8-key MMA tiles
  constexpr int kOTiles = T::kPvCols / 8;  // output columns of one warp, in 8-wide MMA tiles

  extern __shared__ __align__(128) unsigned char smem[];
  Elem* q_s = reinterpret_cast<Elem*>(smem + Layout::kQ);

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / T::kWarpsN, warp_n = warp % T::kWarpsN;
  // With a plan the KV heads run along x, so the blocks launch item by item, longest first.
  const int unit = p.work != nullptr ? blockIdx.x : blockIdx.y;
  const int kv_head = unit / T::kBlocksPerKvHead;
  const int row_block = unit % T::kBlocksPerKvHead;
  const int head0 = kv_head * T::kGroup + row_block * kBM;
  const int rows = min(kBM, T::kGroup - row_block * kBM);

  // This block's key tiles [t_begin, t_end) of sequence b: chunk `part` of `chunks`. A plan says
  // so per block; otherwise the visible tiles split evenly over the partitions (extra partitions
  // are empty).
  int b, part, chunks, t_begin, t_end, n, key_lo;
  long long partial_base;  // partial row of (head 0, chunk 0): head h, chunk c at + h * chunks + c
  if (p.work != nullptr) {
    if (static_cast<int>(blockIdx.y) >= *p.work_count) return;  // past this step's plan
    const WorkItem item = p.work[blockIdx.y];
    b = item.seq;
    part = item.chunk;
    chunks = item.chunks;
    t_begin = item.tile_begin;
    t_end = item.tile_end;
    n = item.seq_len;
    partial_base = static_cast<long long>(item.first_partial) * p.heads;
  } else {
    b = blockIdx.z;
    part = blockIdx.x;
    chunks = p.partitions;
    n = p.seq_lens[b];
    const int tile_lo = T::Mask::visible_begin(n, p) / kBN;
    const int tile_count = max(0, (n + kBN - 1) / kBN - tile_lo);
    t_begin = tile_lo + static_cast<int>(static_cast<long long>(part) * tile_count / chunks);
    t_end = tile_lo + static_cast<int>(static_cast<long long>(part + 1) * tile_count / chunks);
    partial_base = static_cast<long long>(b) * p.heads * chunks;
  }
  key_lo = T::Mask::visible_begin(n, p);
  const int num_tiles = T::kFault == Fault::kDropLastTile && t_end - t_begin > 1
                            ? t_end - t_begin - 1
                            : t_end - t_begin;

  const Elem* k_base = static_cast<const Elem*>(p.k_cache);
  const Elem* v_base = static_cast<const Elem*>(p.v_cache);
  auto k_stage = [&](int s) {
    return reinterpret_cast<Elem*>(smem + Layout::kPipeline + s * T::kStageBytes);
  };
  auto v_stage = [&](int s) {
    return reinterpret_cast<Elem*>(smem + Layout::kPipeline + s * T::kStageBytes +
                                   T::kKvTileBytes);
  };
  // Each thread copies the same kLoadsPerThread chunks (rows) of every tile. For a paged cache
  // the page of each row is looked up one tile ahead (next_pages), so the page-table reads are
  // in flight during the previous tile's math instead of stalling the copy issue: looked up at
  // issue time, paged steps took 1.2-1.4x the contiguous time (docs/performance.md).
  constexpr int kLoadsPerThread = kBN * kCpr / T::kThreads;
  using Kv = typename T::KvOperand;
  int next_pages[Kv::kHasLookup ? kLoadsPerThread : 1];
  auto look_up_tile = [&](int tile) {
    if constexpr (Kv::kHasLookup) {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j) {
        const int key = tile * kBN + (tid + j * T::kThreads) / kCpr;
        next_pages[j] = key < n ? Kv::lookup(p, b, key) : 0;
      }
    }
  };
  // Keys past the sequence are zero-filled: their V rows contribute 0 · 0, never NaN.
  auto issue_tile = [&](int tile, int stage) {
    Elem* k_s = k_stage(stage);
    Elem* v_s = v_stage(stage);
#pragma unroll
    for (int j = 0; j < kLoadsPerThread; ++j) {
      const int i = tid + j * T::kThreads;
      const int r = i / kCpr, c = i % kCpr;
      const int key = tile * kBN + r;
      const bool in_range = key < n;
      const int page = Kv::kHasLookup ? next_pages[Kv::kHasLookup ? j : 0] : 0;
      const long long off = in_range ? Kv::row_offset_from(p, b, key, kv_head, kDepth, page) + c * 8 : 0;
      ptx::cp_async_16(k_s + swizzled<kCpr>(r, c), k_base + off, in_range ? 16 : 0);
      ptx::cp_async_16(v_s + swizzled<kCpr>(r, c), v_base + off, in_range ? 16 : 0);
    }
  };

  // Start the pipeline first so the K/V loads overlap the Q load.
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < num_tiles) {
      look_up_tile(t_begin + s);
      issue_tile(t_begin + s, s);
    }
    ptx::cp_async_commit();
  }
  if (T::kStages - 1 < num_tiles) look_up_tile(t_begin + T::kStages - 1);

  const Elem* q_g = static_cast<const Elem*>(p.q) + (static_cast<long long>(b) * p.heads + head0) * kDepth;
  for (int i = tid; i < kBM * kCpr; i += T::kThreads) {
    const int r = i / kCpr, c = i % kCpr;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < rows) v = *reinterpret_cast<const uint4*>(q_g + r * kDepth + c * 8);
    *reinterpret_cast<uint4*>(q_s + swizzled<kCpr>(r, c)) = v;
  }
  __syncthreads();

  // Q fragments of this warp's rows, kept in registers for the whole key loop.
  uint32_t q_frag[kMTiles][kDepth / 16][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int ks = 0; ks < kDepth / 16; ++ks)
      ptx::ldmatrix_x4(q_frag[mt][ks],
                       q_s + swizzled<kCpr>(warp_m * kWM + mt * 16 + lane % 16, ks * 2 + lane / 16));

  // Running state of the two rows (lane/4 and lane/4 + 8) of each 16-row tile this thread holds.
  float row_max[kMTiles][2], row_sum[kMTiles][2];
  float o_acc[kMTiles][kOTiles][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
#pragma unroll
    for (int ot = 0; ot < kOTiles; ++ot) o_acc[mt][ot][0] = o_acc[mt][ot][1] = o_acc[mt][ot][2] = o_acc[mt][ot][3] = 0.f;
  }
  const float scale_log2 = p.scale * kLog2e;
  const int warp_key0 = warp_n * kWN;  // this warp's first key within a tile

  for (int it = 0; it < num_tiles; ++it) {
    ptx::cp_async_wait<T::kStages - 2>();
    __syncthreads();  // tile `it` has landed for every thread; stage (it-1) is free to refill
    if (it + T::kStages - 1 < num_tiles) {
      issue_tile(t_begin + it + T::kStages - 1, (it + T::kStages - 1) % T::kStages);
      if (it + T::kStages < num_tiles) look_up_tile(t_begin + it + T::kStages);
    }
    ptx::cp_async_commit();

    const Elem* k_s = k_stage(it % T::kStages);
    const Elem* v_s = v_stage(it % T::kStages);
    const int tile_key0 = (t_begin + it) * kBN;

    // S = Q·Kᵀ over this warp's WM × WN block, K fragments fetched one BK slab at a time.
    float s[kMTiles][kNTiles][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.f;
#pragma unroll
    for (int kb = 0; kb < kDepth / kBK; ++kb) {
      uint32_t k_frag[kWN / 16][kBK / 16][4];
#pragma unroll
      for (int np = 0; np < kWN / 16; ++np)
#pragma unroll
        for (int ks = 0; ks < kBK / 16; ++ks) {
          const int mat = lane / 8;
          const int key_row = warp_key0 + np * 16 + (mat / 2) * 8 + lane % 8;
          const int chunk = (kb * (kBK / 16) + ks) * 2 + mat % 2;
          ptx::ldmatrix_x4(k_frag[np][ks], k_s + swizzled<kCpr>(key_row, chunk));
        }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int np = 0; np < kWN / 16; ++np)
#pragma unroll
          for (int ks = 0; ks < kBK / 16; ++ks) {
            const uint32_t(&a)[4] = q_frag[mt][kb * (kBK / 16) + ks];
            ptx::Mma<Elem>::run(s[mt][2 * np], a, k_frag[np][ks][0], k_frag[np][ks][1]);
            ptx::Mma<Elem>::run(s[mt][2 * np + 1], a, k_frag[np][ks][2], k_frag[np][ks][3]);
          }
    }

    // Scale into log2 units and hide keys outside [key_lo, n); tile max per row of this warp.
    float tile_max[kMTiles][2];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      tile_max[mt][0] = tile_max[mt][1] = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = tile_key0 + warp_key0 + nt * 8 + (lane % 4) * 2 + (e & 1);
          const bool visible = key >= key_lo && key < n;
          s[mt][nt][e] = visible ? s[mt][nt][e] * scale_log2 : -INFINITY;
          tile_max[mt][e / 2] = fmaxf(tile_max[mt][e / 2], s[mt][nt][e]);
        }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        tile_max[mt][h] = fmaxf(tile_max[mt][h], __shfl_xor_sync(0xffffffffu, tile_max[mt][h], 1));
        tile_max[mt][h] = fmaxf(tile_max[mt][h], __shfl_xor_sync(0xffffffffu, tile_max[mt][h], 2));
      }
    }

    if constexpr (T::kWarpSplitK) {
      // Each warp folds its own keys into its own state; P stays in registers as the A operand.
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float m_new = fmaxf(row_max[mt][h], tile_max[mt][h]);
          const float alpha = rescale(row_max[mt][h], m_new);
          const float base = exp_base(m_new);
          float sum = 0.f;
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e) {
              s[mt][nt][e] = exp2f(s[mt][nt][e] - base);
              sum += s[mt][nt][e];
            }
          row_sum[mt][h] = row_sum[mt][h] * alpha + sum;  // this thread's share; quad-summed at the end
          row_max[mt][h] = m_new;
#pragma unroll
          for (int ot = 0; ot < kOTiles; ++ot) {
            o_acc[mt][ot][2 * h] *= alpha;
            o_acc[mt][ot][2 * h + 1] *= alpha;
          }
        }
#pragma unroll
      for (int ks = 0; ks < kWN / 16; ++ks) {
        uint32_t p_frag[kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          p_frag[mt][0] = ptx::pack2<Elem>(s[mt][2 * ks][0], s[mt][2 * ks][1]);
          p_frag[mt][1] = ptx::pack2<Elem>(s[mt][2 * ks][2], s[mt][2 * ks][3]);
          p_frag[mt][2] = ptx::pack2<Elem>(s[mt][2 * ks + 1][0], s[mt][2 * ks + 1][1]);
          p_frag[mt][3] = ptx::pack2<Elem>(s[mt][2 * ks + 1][2], s[mt][2 * ks + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < kDepth / 16; ++dp) {
          const int mat = lane / 8;
          uint32_t v_frag[4];
          ptx::ldmatrix_x4_trans(
              v_frag, v_s + swizzled<kCpr>(warp_key0 + ks * 16 + (mat % 2) * 8 + lane % 8,
                                           dp * 2 + mat / 2));
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            ptx::Mma<Elem>::run(o_acc[mt][2 * dp], p_frag[mt], v_frag[0], v_frag[1]);
            ptx::Mma<Elem>::run(o_acc[mt][2 * dp + 1], p_frag[mt], v_frag[2], v_frag[3]);
          }
        }
      }
    } else {
      // The warps of a row band share the tile's max and sum, and P, through shared memory;
      // then each computes P·V for its own slice of the depth over all BN keys.
      float* red_max = reinterpret_cast<float*>(smem + Layout::kRowMax);
      float* red_sum = reinterpret_cast<float*>(smem + Layout::kRowSum);
      Elem* p_s = reinterpret_cast<Elem*>(smem + Layout::kP);
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (lane % 4 == 0)
            red_max[warp_n * kBM + warp_m * kWM + mt * 16 + lane / 4 + 8 * h] = tile_max[mt][h];
      __syncthreads();
      float alpha[kMTiles][2];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = warp_m * kWM + mt * 16 + lane / 4 + 8 * h;
          float m_new = row_max[mt][h];
#pragma unroll
          for (int w = 0; w < T::kWarpsN; ++w) m_new = fmaxf(m_new, red_max[w * kBM + row]);
          alpha[mt][h] = rescale(row_max[mt][h], m_new);
          row_max[mt][h] = m_new;
          const float base = exp_base(m_new);
          float sum = 0.f;
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
            const float p0 = exp2f(s[mt][nt][2 * h] - base);
            const float p1 = exp2f(s[mt][nt][2 * h + 1] - base);
            sum += p0 + p1;
            *reinterpret_cast<uint32_t*>(p_s + row * T::kPStride + warp_key0 + nt * 8 +
                                         (lane % 4) * 2) = ptx::pack2<Elem>(p0, p1);
          }
          sum += __shfl_xor_sync(0xffffffffu, sum, 1);
          sum += __shfl_xor_sync(0xffffffffu, sum, 2);
          if (lane % 4 == 0) red_sum[warp_n * kBM + row] = sum;
        }
      __syncthreads();
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = warp_m * kWM + mt * 16 + lane / 4 + 8 * h;
          float sum = 0.f;
#pragma unroll
          for (int w = 0; w < T::kWarpsN; ++w) sum += red_sum[w * kBM + row];
          row_sum[mt][h] = row_sum[mt][h] * alpha[mt][h] + sum;
#pragma unroll
          for (int ot = 0; ot < kOTiles; ++ot) {
            o_acc[mt][ot][2 * h] *= alpha[mt][h];
            o_acc[mt][ot][2 * h + 1] *= alpha[mt][h];
          }
        }
      const int col_chunk0 = warp_n * T::kPvCols / 8;
#pragma unroll
      for (int ks = 0; ks < kBN / 16; ++ks) {
        uint32_t p_frag[kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
          ptx::ldmatrix_x4(p_frag[mt], p_s + (warp_m * kWM + mt * 16 + lane % 16) * T::kPStride +
                                           ks * 16 + (lane / 16) * 8);
#pragma unroll
        for (int dp = 0; dp < kOTiles / 2; ++dp) {
          const int mat = lane / 8;
          uint32_t v_frag[4];
          ptx::ldmatrix_x4_trans(v_frag, v_s + swizzled<kCpr>(ks * 16 + (mat % 2) * 8 + lane % 8,
                                                              col_chunk0 + dp * 2 + mat / 2));
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            ptx::Mma<Elem>::run(o_acc[mt][2 * dp], p_frag[mt], v_frag[0], v_frag[1]);
            ptx::Mma<Elem>::run(o_acc[mt][2 * dp + 1], p_frag[mt], v_frag[2], v_frag[3]);
          }
        }
      }
    }
  }

  // The key loop is over: a programmatically launched reduce may start its launch now (it waits
  // for this whole grid to finish before it reads a partial).
  ptx::launch_dependents();

  // Epilogue: drain the pipeline, gather (max, sum, unnormalised output) per row in shared
  // memory (one copy per warp column with warp split-K), then merge and write.
  ptx::cp_async_wait<0>();
  __syncthreads();
  float* merge_o = reinterpret_cast<float*>(smem + Layout::kPipeline);
  float* merge_max = merge_o + T::kMergeCopies * kBM * kDepth;
  float* merge_sum = merge_max + T::kMergeCopies * kBM;
  const int copy = T::kWarpSplitK ? warp_n : 0;
  const int col0 = T::kWarpSplitK ? 0 : warp_n * T::kPvCols;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_m * kWM + mt * 16 + lane / 4 + 8 * h;
      float sum = row_sum[mt][h];
      if constexpr (T::kWarpSplitK) {
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      }
      if (lane % 4 == 0 && (T::kWarpSplitK || warp_n == 0)) {
        merge_max[copy * kBM + row] = row_max[mt][h];
        merge_sum[copy * kBM + row] = sum;
      }
#pragma unroll
      for (int ot = 0; ot < kOTiles; ++ot) {
        const int col = col0 + ot * 8 + (lane % 4) * 2;
        float* dst = merge_o + (copy * kBM + row) * kDepth + col;
        dst[0] = o_acc[mt][ot][2 * h];
        dst[1] = o_acc[mt][ot][2 * h + 1];
      }
    }
  __syncthreads();

  for (int i = tid; i < rows * kDepth; i += T::kThreads) {
    const int row = i / kDepth, col = i % kDepth;
    float m_all = -INFINITY;
#pragma unroll
    for (int c = 0; c < T::kMergeCopies; ++c) m_all = fmaxf(m_all, merge_max[c * kBM + row]);
    float sum = 0.f, acc = 0.f;
#pragma unroll
    for (int c = 0; c < T::kMergeCopies; ++c) {
      const float w = rescale(merge_max[c * kBM + row], m_all);
      sum += merge_sum[c * kBM + row] * w;
      acc += merge_o[(c * kBM + row) * kDepth + col] * w;
    }
    const int head = head0 + row;
    const long long bh = static_cast<long long>(b) * p.heads + head;
    if (chunks == 1) {
      // The whole key range is here: finish the softmax, with the sink counted once.
      float denom = sum, numer = acc;
      if constexpr (T::kHasSink) {
        const float sink = p.sink_logits[head] * kLog2e;
        const float m_total = fmaxf(m_all, sink);
        const float w = rescale(m_all, m_total);
        denom = sum * w + sink_weight(sink, m_total);
        numer = acc * w;
      }
      const float o = denom > 0.f ? numer / denom : 0.f;
      static_cast<Out*>(p.out)[bh * kDepth + col] = ptx::from_float<Out>(o);
    } else {
      if constexpr (T::kFault == Fault::kSinkPerPartition && T::kHasSink) {
        const float sink = p.sink_logits[head] * kLog2e;
        const float m_total = fmaxf(m_all, sink);
        sum = sum * rescale(m_all, m_total) + sink_weight(sink, m_total);
        acc *= rescale(m_all, m_total);
        m_all = m_total;
      }
      const long long idx = partial_base + static_cast<long long>(head) * chunks + part;
      p.partial_out[idx * kDepth + col] = sum > 0.f ? acc / sum : 0.f;
      if (col == 0) {
        p.partial_max[idx] = m_all;
        p.partial_sum[idx] = sum;
      }
    }
  }

  // Fused reduce: the last partition of these rows to finish combines all of them, which saves
  // the second launch. The barrier gathers the block's partial writes and one thread publishes
  // them with a gpu-scope acq_rel atomic (cumulative through the barrier), so the block pays
  // one fence, not one per thread: a fence in every thread cost +2.5 us at 16 partitions
  // (docs/performance.md).
  if (chunks > 1 && p.split_counters != nullptr) {
    unsigned* counter = p.split_counters + static_cast<long long>(b) * gridDim.y + blockIdx.y;
    // __syncthreads_or broadcasts thread 0's verdict without static shared memory (which would
    // add to the dynamic size the generator checked against the device limit).
    const bool is_last = __syncthreads_or(
        tid == 0 && ptx::atomic_add_acq_rel_gpu(counter, 1u) == static_cast<unsigned>(chunks - 1));
    if (!is_last) return;
    // The drained pipeline buffers hold the combine's scratch; the launcher falls back to the
    // separate reduce when they are too small for this partition count.
    fused_combine_rows<Out, T::kHasSink, T::kFault>(p, b, head0, rows, kDepth,
                                                    reinterpret_cast<float*>(smem + Layout::kPipeline));
    if (tid == 0) *counter = 0;  // ready for the next step (graph replays reuse the counters)
  }
}

}  // namespace mha
