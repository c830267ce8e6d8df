// The stages of one decode block, in the order decode_kernel.cuh runs them (the K/V copy into the
// cp.async pipeline is kv_pipeline.cuh's):
//   block_work         which key tiles of which sequence this block reads, and where it writes
//   load_q, stage_q    the block's query rows into registers, then shared memory (both
//                      MMA orientations)
//   load_q_fragments   this warp's query rows into MMA fragments, once
//   score_tile         S = Q·Kᵀ for one tile
//   convert_tile       fp8 caches, heads on the MMA rows: the landed K/V tile into fp16 tiles the
//                      MMAs read (per warp with warp split-K)
//   mask_and_tile_max  soft-cap, scale into log2 units, hide invisible keys, the tile's row maxima
//   fold_tile_*        the online-softmax update and P·V, per warp (warp split-K) or shared
//   write_merge_area   each warp's (max, sum, output) into the drained pipeline buffers
//   write_rows         merge the copies, then the output (one chunk) or a partial
// RowsMath holds them together for the kernel: heads on the MMA rows (decode_stages_columns.cuh
// has the WM-8 orientation, heads on its columns). Each is __forceinline__ over the kernel's
// registers: the SASS of every instance is what the single-body kernel compiled to (checked with
// cuobjdump on six instances, docs/performance.md).
#pragma once

#include <math.h>

#include "kernels/block_rows.cuh"
#include "kernels/decode_params.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/fault_injection.cuh"
#include "kernels/kv_operand.cuh"
#include "kernels/masks.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/partition_tiles.cuh"
#include "kernels/ptx.cuh"

namespace mha {

// Byte offsets of the shared-memory regions of one instance.
template <class T>
struct DecodeSmemLayout {
  static constexpr int kPipeline = 0;  // stages × (K tile, V tile); later the epilogue merge area
  static constexpr int kConvert =      // fp8 caches on the MMA rows: the converted K and V tiles
      T::kPipelineBytes > T::kMergeBytes ? T::kPipelineBytes : T::kMergeBytes;
  static constexpr int kQ = kConvert + T::kConvertBytes;
  static constexpr int kP = kQ + T::kQBytes;
  static constexpr int kRowMax = kP + T::kPBytes;
  static constexpr int kRowSum = kRowMax + T::kWarpsN * T::kBM * 4;
  static constexpr int kPageEntries =  // paged caches: the page-table entry slots
      T::kRowStatBytes == 0 ? kP + T::kPBytes : kRowSum + T::kWarpsN * T::kBM * 4;
  static_assert(kPageEntries + T::kPageEntryBytes == T::kSmemBytes,
                "layout must match DecodeTraits::kSmemBytes");
};

// Element offset of 16-byte chunk c of row r in a [rows][depth] tile; XOR-swizzling the chunk
// with the row spreads the 8 rows an ldmatrix reads over all 32 banks.
template <int kChunksPerRow>
__device__ __forceinline__ int swizzled(int r, int c) {
  return r * kChunksPerRow * 8 + ((c ^ (r & 7)) * 8);
}

// Byte offset of 16-byte chunk c of row r in an fp8 [rows][depth] tile that ldmatrix reads
// (T::kFp8InRegisters). Each 8-row matrix must cover the 8 16-byte bank groups once: rows of 8
// or 16 chunks XOR the chunk with r & 7, as swizzled() does; d64 rows are 4 chunks, two rows to
// 128 bytes, so rows r and r + 1 already differ in the upper bank half and the chunk XORs with
// (r / 2) & 3.
template <int kChunksPerRow>
__device__ __forceinline__ int fp8_swizzled_bytes(int r, int c) {
  static_assert(kChunksPerRow == 4 || kChunksPerRow % 8 == 0, "fp8 rows of 64, 128 or 256 bytes");
  const int mixed = kChunksPerRow >= 8 ? c ^ (r & 7) : c ^ ((r >> 1) & 3);
  return (r * kChunksPerRow + mixed) * 16;
}

// This block's key tiles of sequence b: num_tiles tiles, first_tile and then the run run_begin,
// run_begin + 1, ...; chunk `part` of `chunks`, n keys of which [key_lo, n) are visible to some
// token; sequence-local query row r's partial for this chunk is row partial_base + r * chunks +
// part.
struct BlockWork {
  int b, part, chunks, first_tile, run_begin, num_tiles, n, key_lo;
  long long partial_base;
};

// The tiles the key loop reads: the block's, less the last one in the test instance that drops it
// (Fault::kDropLastTile).
template <class T>
__device__ __forceinline__ int block_tiles_read(const BlockWork& w) {
  return injected_fault<T>() == Fault::kDropLastTile && w.num_tiles > 1 ? w.num_tiles - 1
                                                                        : w.num_tiles;
}

// Whether a block's first tile is known before its sequence's length: masks visible from key 0
// (null, causal). Their fixed partitions split the T visible tiles so that partition `part`'s
// first tile is visible tile `part` and its others a contiguous 1/P share of tiles P .. T - 1
// (partition_tiles_first_apart), so the kernel starts the first tile's copy (contiguous) or
// page look-up (paged) while the length is in flight (decode_kernel.cuh). With every tile
// interleaved (k, k + P, ...) long steps and paged look-ups lost 1-13%.
template <class T>
constexpr bool first_tile_before_length() {
  return T::Mask::kVisibleFromZero;
}

// The block's tile `it` for it >= 1 (its run). With one run per partition it is counted from the
// first tile, so no second register carries the run's start through the key loop (paged BM-8
// tiles took 5-8% longer with it).
template <class T>
__device__ __forceinline__ int block_run_tile(const BlockWork& w, int it) {
  if constexpr (first_tile_before_length<T>())
    return w.run_begin + it - 1;
  else
    return w.first_tile + it;
}

// The block's tile `it`: its first, then its run. A fixed partition's first tile apart is its
// index (the visible range starts at key 0), a plan's the one before its run: both from values
// the block keeps anyway, so the key loop holds no register for it (SASS: BM-16 paged 136 -> 128).
template <class T>
__device__ __forceinline__ int block_tile(const DecodeParams& p, const BlockWork& w, int it) {
  if constexpr (first_tile_before_length<T>())
    return it > 0 ? block_run_tile<T>(w, it) : p.work == nullptr ? w.part : w.run_begin - 1;
  else
    return w.first_tile + it;
}

// A plan says what each block reads: one run of tiles (first_tile, then the rest of it).
// block_work sets what is known without the length (with a plan: everything); block_length the
// rest. False: the block is past this step's plan.
template <class T>
__device__ __forceinline__ bool block_work(const DecodeParams& p, BlockWork& w) {
  if (p.work != nullptr) {
    if (static_cast<int>(blockIdx.y) >= *p.work_count) return false;
    const WorkItem item = p.work[blockIdx.y];
    w.b = item.seq;
    w.part = item.chunk;
    w.chunks = item.chunks;
    w.first_tile = item.tile_begin;
    w.run_begin = item.tile_begin + 1;
    w.num_tiles = item.tile_end - item.tile_begin;
    w.n = item.seq_len;
    w.key_lo = visible_begin<typename T::Mask>(w.n, p);
    w.partial_base =
        static_cast<long long>(item.first_partial) * p.heads * query_tokens<T::kMultiToken>(p);
  } else {
    w.b = blockIdx.z;
    w.part = blockIdx.x;
    w.chunks = p.partitions;
    if constexpr (first_tile_before_length<T>()) w.first_tile = w.part;  // visible from key 0
    w.partial_base =
        static_cast<long long>(w.b) * p.heads * query_tokens<T::kMultiToken>(p) * w.chunks;
  }
  return true;
}

// The sequence's length: a load for fixed partitions (issued by the caller early, used late),
// the plan item's otherwise.
__device__ __forceinline__ int sequence_length(const DecodeParams& p, const BlockWork& w) {
  return p.work == nullptr ? p.seq_lens[w.b] : w.n;
}

// Fixed partitions: the sequence's length n, its visible range and this partition's tiles.
template <class T>
__device__ __forceinline__ void block_length(const DecodeParams& p, BlockWork& w, int n) {
  if (p.work != nullptr) return;
  w.n = n;
  w.key_lo = visible_begin<typename T::Mask>(w.n, p);
  const int tile_lo = w.key_lo / T::kBN;
  const int tile_count = max(0, (w.n + T::kBN - 1) / T::kBN - tile_lo);
  const PartitionTiles own = first_tile_before_length<T>()
                                 ? partition_tiles_first_apart(tile_count, w.chunks, w.part)
                                 : partition_tiles_one_run(tile_count, w.chunks, w.part);
  w.first_tile = tile_lo + own.first;
  w.run_begin = tile_lo + own.run_begin;
  w.num_tiles = own.count;
}

// The block's Q rows, in flight: each thread's chunks of them, loaded into registers by load_q
// (rows past the group are zeros) and stored by stage_q. Apart so that a paged step can send Q's
// loads out with its first look-up and the length, ahead of its first tile's copies
// (decode_kernel).
template <class T>
struct QChunks {
  static constexpr int kChunks = T::kBM * T::kChunksPerRow;
  static constexpr int kPerThread = (kChunks + T::kThreads - 1) / T::kThreads;
  uint4 loaded[kPerThread];
};

// Every load before any store: as a loop over i += threads, ptxas stored the first chunk before
// loading the next, two round trips for BM 16 (SASS), on the ramp of every step.
template <class T>
__device__ __forceinline__ QChunks<T> load_q(const DecodeParams& p, int b, const BlockRows& rows,
                                             int tid) {
  using Q = typename T::Elem;
  constexpr int kCpr = T::kChunksPerRow;
  const Q* q_seq = static_cast<const Q*>(p.q);
  const Q* q_g = q_seq + q_row_offset<T::kMultiToken>(p, b, block_query_row<T>(rows, 0));
  const int head_stride = p.q_head_stride;
  QChunks<T> q;
#pragma unroll
  for (int k = 0; k < QChunks<T>::kPerThread; ++k) {
    const int i = tid + k * T::kThreads, r = i / kCpr, c = i % kCpr;
    q.loaded[k] = make_uint4(0, 0, 0, 0);
    if (i < QChunks<T>::kChunks && r < rows.count) {
      // One token's rows are consecutive heads; several tokens' rows step across tokens too.
      const Q* row = T::kMultiToken
                         ? q_seq + q_row_offset<T::kMultiToken>(p, b, block_query_row<T>(rows, r))
                         : q_g + r * head_stride;
      q.loaded[k] = *reinterpret_cast<const uint4*>(row + c * 8);
    }
  }
  return q;
}

// The block's Q rows into shared memory, swizzled for ldmatrix. With an fp8 cache a bf16 q
// becomes fp16 here, rounded to nearest and saturated at fp16's range (±65504; |q| below 2^-14
// keeps fewer bits).
template <class T>
__device__ __forceinline__ const typename T::MmaElem* stage_q(const QChunks<T>& q,
                                                              unsigned char* smem, int tid) {
  using Elem = typename T::MmaElem;
  using Q = typename T::Elem;
  constexpr int kCpr = T::kChunksPerRow;
  Elem* q_s = reinterpret_cast<Elem*>(smem + DecodeSmemLayout<T>::kQ);
#pragma unroll
  for (int k = 0; k < QChunks<T>::kPerThread; ++k) {
    const int i = tid + k * T::kThreads, r = i / kCpr, c = i % kCpr;
    if (i >= QChunks<T>::kChunks) break;
    uint4 v = q.loaded[k];
    if constexpr (!std::is_same_v<Q, Elem>) {
      uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 f = ptx::unpack2<Q>(words[j]);
        words[j] = ptx::pack2<Elem>(fminf(fmaxf(f.x, -65504.f), 65504.f),
                                    fminf(fmaxf(f.y, -65504.f), 65504.f));
      }
      v = make_uint4(words[0], words[1], words[2], words[3]);
    }
    *reinterpret_cast<uint4*>(q_s + swizzled<kCpr>(r, c)) = v;
  }
  __syncthreads();
  return q_s;
}

// The warp's Q rows into MMA A fragments kept in registers for the whole key loop.
template <class T>
__device__ __forceinline__ void load_q_fragments(
    const QChunks<T>& q, unsigned char* smem, int tid, int warp_m, int lane,
    uint32_t (&q_frag)[T::kWM / 16][T::kDepth / 16][4]) {
  constexpr int kCpr = T::kChunksPerRow;
  const typename T::MmaElem* q_s = stage_q<T>(q, smem, tid);
#pragma unroll
  for (int mt = 0; mt < T::kWM / 16; ++mt)
#pragma unroll
    for (int ks = 0; ks < T::kDepth / 16; ++ks)
      ptx::ldmatrix_x4(q_frag[mt][ks], q_s + swizzled<kCpr>(warp_m * T::kWM + mt * 16 + lane % 16,
                                                            ks * 2 + lane / 16));
}

// S = Q·Kᵀ over this warp's WM × WN block of one tile, K fragments fetched one BK slab at a time.
template <class T>
__device__ __forceinline__ void score_tile(const uint32_t (&q_frag)[T::kWM / 16][T::kDepth / 16][4],
                                           const typename T::MmaElem* k_s, int warp_key0, int lane,
                                           float (&s)[T::kWM / 16][T::kWN / 8][4]) {
  constexpr int kMTiles = T::kWM / 16, kNTiles = T::kWN / 8, kBK = T::kBK, kWN = T::kWN;
  constexpr int kCpr = T::kChunksPerRow;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
      s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.f;
#pragma unroll
  for (int kb = 0; kb < T::kDepth / kBK; ++kb) {
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
          ptx::Mma<typename T::MmaElem>::run(s[mt][2 * np], a, k_frag[np][ks][0],
                                             k_frag[np][ks][1]);
          ptx::Mma<typename T::MmaElem>::run(s[mt][2 * np + 1], a, k_frag[np][ks][2],
                                             k_frag[np][ks][3]);
        }
  }
}

// Where element e (0..3) of a thread's m16n8 MMA accumulator fragment lies in a 16 x 8 tile whose
// first row (or column) is `first`: row lane / 4 (+ 8 for e >= 2), column 2 · (lane % 4) (+ 1 for
// odd e). The scores' keys are its columns with heads on the MMA rows and its rows with heads on
// the columns. (Added to `first` term by term: summed first, ptxas scheduled the columns math's
// mask otherwise, SASS.)
struct MmaAccumulator {
  __device__ __forceinline__ static int row(int first, int lane, int e) {
    return first + lane / 4 + 8 * (e / 2);
  }
  __device__ __forceinline__ static int col(int first, int lane, int e) {
    return first + (lane % 4) * 2 + (e & 1);
  }
};

// What mask_and_tile_max multiplies by: q·k times the softmax scale (and, for fp8 caches, the
// KV head's K scale) in log2 units; soft-capped, cap · log2 e · tanh(q·k · scale / cap).
struct ScoreScaling {
  float mul_in, mul_out;
};

// One score of block row `row`'s key, scaled into log2 units and, with kCheckKeys, hidden (-inf)
// for a key the row does not see (row_sees_key): without soft-capping s * mul_in, with it
// mul_out * tanh(s * mul_in). Both MMA orientations' masks, element by element.
template <class T, bool kCheckKeys>
__device__ __forceinline__ float scaled_score(float s, int key, int row, const KeyBounds& keys,
                                              const ScoreScaling& scaling) {
  const float x = T::kSoftCap ? scaling.mul_out * tanhf(s * scaling.mul_in) : s * scaling.mul_in;
  return !kCheckKeys || row_sees_key<T>(keys, row, key) ? x : -INFINITY;
}

// Scale into log2 units and, with kCheckKeys, hide keys a row does not see (scaled_score): a
// score's key is its accumulator column, its block row the accumulator row (ScoreScaling says
// which values give score * log2 e, capped or not).
template <class T, bool kCheckKeys>
__device__ __forceinline__ void scale_scores(float (&s)[T::kWM / 16][T::kWN / 8][4], int first_key,
                                             int first_row, int lane, const KeyBounds& keys,
                                             float mul_in, float mul_out) {
#pragma unroll
  for (int mt = 0; mt < T::kWM / 16; ++mt)
#pragma unroll
    for (int nt = 0; nt < T::kWN / 8; ++nt)
#pragma unroll
      for (int e = 0; e < (T::kUpperRowsPadding ? 2 : 4); ++e) {
        const int key = MmaAccumulator::col(first_key + nt * 8, lane, e);
        const int row = MmaAccumulator::row(first_row + mt * 16, lane, e);
        s[mt][nt][e] = scaled_score<T, kCheckKeys>(s[mt][nt][e], key, row, keys, {mul_in, mul_out});
      }
}

// Scale and hide (scale_scores), then the tile max per row of this warp. A warp whose kWN keys
// are all visible (in every tile but a sequence's last and, with a window or chunk, its first)
// skips the per-key test: a compare and a select per score, 19 of MQA's 228 instructions a tile
// (SASS). The test is the same for the whole warp, so the branch does not diverge.
template <class T>
__device__ __forceinline__ void mask_and_tile_max(float (&s)[T::kWM / 16][T::kWN / 8][4],
                                                  int first_key, int first_row, int lane,
                                                  const KeyBounds& keys, float mul_in,
                                                  float mul_out,
                                                  float (&tile_max)[T::kWM / 16][2]) {
  if (first_key >= keys.all_lo && first_key + T::kWN <= keys.all_end)
    scale_scores<T, false>(s, first_key, first_row, lane, keys, mul_in, mul_out);
  else
    scale_scores<T, true>(s, first_key, first_row, lane, keys, mul_in, mul_out);
#pragma unroll
  for (int mt = 0; mt < T::kWM / 16; ++mt) {
    tile_max[mt][0] = tile_max[mt][1] = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < T::kWN / 8; ++nt)
#pragma unroll
      for (int e = 0; e < (T::kUpperRowsPadding ? 2 : 4); ++e)
        tile_max[mt][e / 2] = fmaxf(tile_max[mt][e / 2], s[mt][nt][e]);
#pragma unroll
    for (int h = 0; h < (T::kUpperRowsPadding ? 1 : 2); ++h) {
      tile_max[mt][h] = fmaxf(tile_max[mt][h], __shfl_xor_sync(0xffffffffu, tile_max[mt][h], 1));
      tile_max[mt][h] = fmaxf(tile_max[mt][h], __shfl_xor_sync(0xffffffffu, tile_max[mt][h], 2));
    }
  }
}

// The scaling of the scores of KV head kv_head (ScoreScaling).
template <class T>
__device__ __forceinline__ ScoreScaling score_scaling(const DecodeParams& p, int kv_head) {
  const float scale = T::kKvFp8 ? p.scale * p.k_scale[kv_head] : p.scale;
  if constexpr (T::kSoftCap) return {scale / p.soft_cap, p.soft_cap * kLog2e};
  return {scale * kLog2e, 0.f};
}

// fp8 caches: rows [row0, row0 + kRows) of the K and V tile that landed in a pipeline stage
// (rows of kKvChunksPerRow 16-byte chunks, unswizzled) into fp16 tiles in the swizzled layout
// score_tile and the P·V product read with ldmatrix, by kWorkers threads (`worker` is this
// thread's index among them). Each 16-byte chunk of 16 fp8 values becomes two 16-byte fp16
// chunks. The scales are applied outside the loop (K's to the score scale, V's to the output).
template <class T, int kRows, int kWorkers>
__device__ __forceinline__ void convert_rows(const unsigned char* k_in, const unsigned char* v_in,
                                             typename T::MmaElem* k_out, typename T::MmaElem* v_out,
                                             int row0, int worker) {
  using Fp8 = typename T::KvElem;
  constexpr int kIn = T::kKvChunksPerRow, kOut = T::kChunksPerRow;
  static_assert(kRows * kIn % kWorkers == 0, "the rows' chunks must divide by the workers");
  // Rolled: unrolled, the 16-row warp-split instances spilled 40 bytes at 168 registers
  // (ptxas); rolled, each iteration recomputes its addresses (about half of its 49
  // instructions, SASS). (Heads-as-columns instances convert in registers instead.)
  static_assert(!T::kFp8InRegisters, "heads as MMA columns convert fp8 in registers");
  constexpr int kIterations = kRows * kIn / kWorkers;
#pragma unroll 1
  for (int j = 0; j < kIterations; ++j) {
    const int i = row0 * kIn + worker + j * kWorkers;
    const int r = i / kIn, c = i % kIn;
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      const uint4 in = *reinterpret_cast<const uint4*>((which ? v_in : k_in) + i * 16);
      const uint32_t words[4] = {in.x, in.y, in.z, in.w};
      uint32_t out[8];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        out[2 * w] = ptx::fp8x2_to_half2<Fp8>(static_cast<uint16_t>(words[w] & 0xffff));
        out[2 * w + 1] = ptx::fp8x2_to_half2<Fp8>(static_cast<uint16_t>(words[w] >> 16));
      }
      typename T::MmaElem* dst = which ? v_out : k_out;
      *reinterpret_cast<uint4*>(dst + swizzled<kOut>(r, 2 * c)) =
          make_uint4(out[0], out[1], out[2], out[3]);
      *reinterpret_cast<uint4*>(dst + swizzled<kOut>(r, 2 * c + 1)) =
          make_uint4(out[4], out[5], out[6], out[7]);
    }
  }
}

// fp8 caches: the landed tile into the fp16 tiles, before the tile's math. With warp split-K each
// warp reads only its own WN keys, so it converts those and waits for its own lanes (no block
// barrier); otherwise the block converts the whole tile and meets at a barrier.
template <class T>
__device__ __forceinline__ void convert_tile(const unsigned char* k_in, const unsigned char* v_in,
                                             typename T::MmaElem* k_out, typename T::MmaElem* v_out,
                                             int warp_key0, int tid) {
  if constexpr (T::kWarpSplitK) {
    convert_rows<T, T::kWN, 32>(k_in, v_in, k_out, v_out, warp_key0, tid % 32);
    __syncwarp();
  } else {
    convert_rows<T, T::kBN, T::kThreads>(k_in, v_in, k_out, v_out, 0, tid);
    __syncthreads();
  }
}

// Lazy rescaling (online_softmax.cuh), decided once for the whole warp: true when some row
// (or head) the warp holds has a tile max more than kRescaleSlack above its reference max. Only
// the first kHalves of each pair are looked at (padding rows of the upper half are not).
template <int kHalves, int kTiles>
__device__ __forceinline__ bool warp_moves_max(const float (&ref_max)[kTiles][2],
                                               const float (&tile_max)[kTiles][2]) {
  bool moves = false;
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int h = 0; h < kHalves; ++h) moves |= needs_new_max(ref_max[t][h], tile_max[t][h]);
  return __any_sync(0xffffffffu, moves);
}

// The running softmax state of the two rows (lane/4 and lane/4 + 8) of each 16-row tile a
// thread holds, and its share of the output.
template <class T>
struct RowState {
  float row_max[T::kWM / 16][2], row_sum[T::kWM / 16][2];
  float o_acc[T::kWM / 16][T::kPvCols / 8][4];
};

// fp8 caches: P·V ran on stored V values; one multiply per output element dequantises them.
template <class T>
__device__ __forceinline__ void scale_output(RowState<T>& st, float v_scale) {
#pragma unroll
  for (int mt = 0; mt < T::kWM / 16; ++mt)
#pragma unroll
    for (int ot = 0; ot < T::kPvCols / 8; ++ot)
#pragma unroll
      for (int e = 0; e < 4; ++e) st.o_acc[mt][ot][e] *= v_scale;
}

// With warp split-K: each warp folds its own keys into its own state; P stays in registers as
// the A operand of P·V.
template <class T>
__device__ __forceinline__ void fold_tile_warp_split_k(float (&s)[T::kWM / 16][T::kWN / 8][4],
                                                       const float (&tile_max)[T::kWM / 16][2],
                                                       const typename T::MmaElem* v_s,
                                                       int warp_key0, int lane, RowState<T>& st) {
  using Elem = typename T::MmaElem;
  constexpr int kMTiles = T::kWM / 16, kNTiles = T::kWN / 8, kOTiles = T::kPvCols / 8;
  constexpr int kCpr = T::kChunksPerRow;
  constexpr int kHalves = T::kUpperRowsPadding ? 1 : 2;
  // Lazy rescaling: the warp moves its rows' reference maxima only when one falls behind.
  if (warp_moves_max<kHalves>(st.row_max, tile_max)) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        const float m_new = fmaxf(st.row_max[mt][h], tile_max[mt][h]);
        const float alpha = rescale(st.row_max[mt][h], m_new);
        st.row_sum[mt][h] *= alpha;
        st.row_max[mt][h] = m_new;
#pragma unroll
        for (int ot = 0; ot < kOTiles; ++ot) {
          st.o_acc[mt][ot][2 * h] *= alpha;
          st.o_acc[mt][ot][2 * h + 1] *= alpha;
        }
      }
  }
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      const float base = exp_base(st.row_max[mt][h]);
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          s[mt][nt][e] = exp2_weight(s[mt][nt][e] - base);
          sum += s[mt][nt][e];
        }
      st.row_sum[mt][h] += sum;  // this thread's share; quad-summed at the end
    }
#pragma unroll
  for (int ks = 0; ks < T::kWN / 16; ++ks) {
    uint32_t p_frag[kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      // Padding rows weigh nothing: their P is 0, so their output stays (0, max -inf, sum 0).
      p_frag[mt][0] = ptx::pack2<Elem>(s[mt][2 * ks][0], s[mt][2 * ks][1]);
      p_frag[mt][1] =
          T::kUpperRowsPadding ? 0u : ptx::pack2<Elem>(s[mt][2 * ks][2], s[mt][2 * ks][3]);
      p_frag[mt][2] = ptx::pack2<Elem>(s[mt][2 * ks + 1][0], s[mt][2 * ks + 1][1]);
      p_frag[mt][3] =
          T::kUpperRowsPadding ? 0u : ptx::pack2<Elem>(s[mt][2 * ks + 1][2], s[mt][2 * ks + 1][3]);
    }
#pragma unroll
    for (int dp = 0; dp < T::kDepth / 16; ++dp) {
      const int mat = lane / 8;
      uint32_t v_frag[4];
      ptx::ldmatrix_x4_trans(
          v_frag,
          v_s + swizzled<kCpr>(warp_key0 + ks * 16 + (mat % 2) * 8 + lane % 8, dp * 2 + mat / 2));
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        ptx::Mma<Elem>::run(st.o_acc[mt][2 * dp], p_frag[mt], v_frag[0], v_frag[1]);
        ptx::Mma<Elem>::run(st.o_acc[mt][2 * dp + 1], p_frag[mt], v_frag[2], v_frag[3]);
      }
    }
  }
}

// Without warp split-K: the warps of a row band share the tile's max and sum, and P, through
// shared memory; then each computes P·V for its own slice of the depth over all BN keys.
template <class T>
__device__ __forceinline__ void fold_tile_shared(unsigned char* smem,
                                                 const float (&s)[T::kWM / 16][T::kWN / 8][4],
                                                 const float (&tile_max)[T::kWM / 16][2],
                                                 const typename T::MmaElem* v_s, int warp_m,
                                                 int warp_n, int warp_key0, int lane,
                                                 RowState<T>& st) {
  using Elem = typename T::MmaElem;
  using Layout = DecodeSmemLayout<T>;
  constexpr int kBM = T::kBM, kWM = T::kWM, kMTiles = T::kWM / 16, kNTiles = T::kWN / 8;
  constexpr int kOTiles = T::kPvCols / 8, kCpr = T::kChunksPerRow;
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
      float m_new = st.row_max[mt][h];
#pragma unroll
      for (int w = 0; w < T::kWarpsN; ++w) m_new = fmaxf(m_new, red_max[w * kBM + row]);
      alpha[mt][h] = rescale(st.row_max[mt][h], m_new);
      st.row_max[mt][h] = m_new;
      const float base = exp_base(m_new);
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const float p0 = exp2_weight(s[mt][nt][2 * h] - base);
        const float p1 = exp2_weight(s[mt][nt][2 * h + 1] - base);
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
      st.row_sum[mt][h] = st.row_sum[mt][h] * alpha[mt][h] + sum;
#pragma unroll
      for (int ot = 0; ot < kOTiles; ++ot) {
        st.o_acc[mt][ot][2 * h] *= alpha[mt][h];
        st.o_acc[mt][ot][2 * h + 1] *= alpha[mt][h];
      }
    }
  const int col_chunk0 = warp_n * T::kPvCols / 8;
#pragma unroll
  for (int ks = 0; ks < T::kBN / 16; ++ks) {
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
        ptx::Mma<Elem>::run(st.o_acc[mt][2 * dp], p_frag[mt], v_frag[0], v_frag[1]);
        ptx::Mma<Elem>::run(st.o_acc[mt][2 * dp + 1], p_frag[mt], v_frag[2], v_frag[3]);
      }
    }
  }
}

// The merge area in the drained pipeline buffers: (output, max, sum) per row, one copy per warp
// column with warp split-K.
template <class T>
struct MergeArea {
  float* o;
  float* max;
  float* sum;
  __device__ __forceinline__ explicit MergeArea(unsigned char* smem)
      : o(reinterpret_cast<float*>(smem + DecodeSmemLayout<T>::kPipeline)),
        max(o + T::kMergeCopies * T::kBM * T::kDepth),
        sum(max + T::kMergeCopies * T::kBM) {}
};

// Each thread's rows of (max, sum, unnormalised output) into the merge area.
template <class T>
__device__ __forceinline__ void write_merge_area(const MergeArea<T>& m, const RowState<T>& st,
                                                 int warp_m, int warp_n, int lane) {
  constexpr int kBM = T::kBM, kDepth = T::kDepth;
  const int copy = T::kWarpSplitK ? warp_n : 0;
  const int col0 = T::kWarpSplitK ? 0 : warp_n * T::kPvCols;
#pragma unroll
  for (int mt = 0; mt < T::kWM / 16; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_m * T::kWM + mt * 16 + lane / 4 + 8 * h;
      float sum = st.row_sum[mt][h];
      if constexpr (T::kWarpSplitK) {
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      }
      if (lane % 4 == 0 && (T::kWarpSplitK || warp_n == 0)) {
        m.max[copy * kBM + row] = st.row_max[mt][h];
        m.sum[copy * kBM + row] = sum;
      }
#pragma unroll
      for (int ot = 0; ot < T::kPvCols / 8; ++ot) {
        const int col = col0 + ot * 8 + (lane % 4) * 2;
        float* dst = m.o + (copy * kBM + row) * kDepth + col;
        dst[0] = st.o_acc[mt][ot][2 * h];
        dst[1] = st.o_acc[mt][ot][2 * h + 1];
      }
    }
}

// Merge the copies of each row, then finish the softmax into the output (the whole key range
// is in this block: the sink counted once) or write this chunk's partial.
template <class T>
__device__ __forceinline__ void write_rows(const DecodeParams& p, const MergeArea<T>& m,
                                           const BlockWork& w, const BlockRows& rows, int tid) {
  using Out = typename T::Out;
  constexpr int kBM = T::kBM, kDepth = T::kDepth;
  for (int i = tid; i < rows.count * kDepth; i += T::kThreads) {
    const int row = i / kDepth, col = i % kDepth;
    SoftmaxMerge merged;
#pragma unroll
    for (int c = 0; c < T::kMergeCopies; ++c) merged.take_max(m.max[c * kBM + row]);
#pragma unroll
    for (int c = 0; c < T::kMergeCopies; ++c) {
      const float wt = rescale(m.max[c * kBM + row], merged.m);
      merged.add_sum(wt, m.sum[c * kBM + row]);
      merged.add_output(wt, m.o[(c * kBM + row) * kDepth + col]);
    }
    const QueryRow query = block_query_row<T>(rows, row);
    if (w.chunks == 1) {
      if constexpr (T::kHasSink) merged.add_sink(p.sink_logits[query.head] * kLog2e);
      static_cast<Out*>(p.out)[out_row_offset<T::kMultiToken>(p, w.b, query) + col] =
          ptx::from_float<Out>(merged.normalised());
      if (col == 0) write_lse<T::kMultiToken>(p, w.b, query, merged.m, merged.l);
    } else {
      if constexpr (injected_fault<T>() == Fault::kSinkPerPartition && T::kHasSink)
        merged.add_sink(p.sink_logits[query.head] * kLog2e);
      const long long idx =
          w.partial_base + static_cast<long long>(rows.first + row) * w.chunks + w.part;
      p.partial_out[idx * kDepth + col] = merged.normalised();
      if (col == 0) {
        p.partial_max[idx] = merged.m;
        p.partial_sum[idx] = merged.l;
      }
    }
  }
}

// Heads on the MMA rows (BM a multiple of 16): the stages above as the kernel body runs them,
// with the Q fragments and the running state they carry through the key loop.
template <class T>
struct RowsMath {
  using Elem = typename T::MmaElem;
  uint32_t q_frag[T::kWM / 16][T::kDepth / 16][4];
  RowState<T> st;

  __device__ __forceinline__ void start(const QChunks<T>& q, unsigned char* smem, int tid,
                                        int warp_m, int lane) {
    load_q_fragments<T>(q, smem, tid, warp_m, lane, q_frag);
#pragma unroll
    for (int mt = 0; mt < T::kWM / 16; ++mt) {
      st.row_max[mt][0] = st.row_max[mt][1] = -INFINITY;
      st.row_sum[mt][0] = st.row_sum[mt][1] = 0.f;
#pragma unroll
      for (int ot = 0; ot < T::kPvCols / 8; ++ot)
        st.o_acc[mt][ot][0] = st.o_acc[mt][ot][1] = st.o_acc[mt][ot][2] = st.o_acc[mt][ot][3] = 0.f;
    }
  }

  // One landed tile: scores, mask and tile max, then the online-softmax fold and P·V.
  __device__ __forceinline__ void fold(unsigned char* smem, const Elem* k_s, const Elem* v_s,
                                       int first_key, int warp_key0, const KeyBounds& keys,
                                       const ScoreScaling& scaling, int warp_m, int warp_n,
                                       int lane) {
    float s[T::kWM / 16][T::kWN / 8][4];
    score_tile<T>(q_frag, k_s, warp_key0, lane, s);
    float tile_max[T::kWM / 16][2];
    mask_and_tile_max<T>(s, first_key, warp_m * T::kWM, lane, keys, scaling.mul_in, scaling.mul_out,
                         tile_max);
    if constexpr (T::kWarpSplitK)
      fold_tile_warp_split_k<T>(s, tile_max, v_s, warp_key0, lane, st);
    else
      fold_tile_shared<T>(smem, s, tile_max, v_s, warp_m, warp_n, warp_key0, lane, st);
  }

  __device__ __forceinline__ void dequantise_output(float v_scale) { scale_output<T>(st, v_scale); }

  __device__ __forceinline__ void to_merge_area(const MergeArea<T>& m, int warp_m, int warp_n,
                                                int lane) const {
    write_merge_area<T>(m, st, warp_m, warp_n, lane);
  }
};

}  // namespace mha
