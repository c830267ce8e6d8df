// Heads as the MMA's columns (WM = 8, warp split-K): the stages of decode_stages.cuh for a
// block of BM = 8·C query heads (C = 1, 2, 4, 8 column tiles of 8 heads), computed transposed.
//   scores  Sᵀ = K·Qᵀ   A: 16 keys × 16 depth of the K tile (ldmatrix), B: Qᵀ, 16 depth × 8 heads
//                       per column tile, held in registers; C: 16 keys × 8 heads
//   output  Oᵀ = Vᵀ·Pᵀ  A: 16 depth × 16 keys of the V tile (ldmatrix.trans), B: Pᵀ, 16 keys ×
//                       8 heads, from the score accumulators by one movmatrix.trans per 8 × 8
//                       block; C: 16 depth × 8 heads
// Every warp takes all BM heads for its own WN keys: each A fragment read from shared memory
// feeds C MMAs, one per column tile, so a group of 64 reads K/V once per 8·C heads instead of
// once per 8 (BM 8), and no warp serialises the softmax of 64 rows (16-row tiles).
// (Measured on MQA and group 16: within 1-3% of the 16-row tiles, docs/performance.md; BM 8
// itself is the g4 winner.)
// On the 16-row path a group of at most 8 fills at most half of every MMA's rows (a group of 4, a
// quarter); here the 8 heads fill its n8 columns, so a tile takes half the MMAs and half the
// output accumulators. Thread lane holds heads c·8 + 2·(lane%4) and +1 of keys (or depth
// columns) lane/4 and lane/4 + 8, so the softmax reduces over keys across the lanes of equal
// lane%4 (xor 4, 8, 16) and each thread's 2·C heads keep their own (max, sum).
// Heads past the group (BM > group) read zero Q rows (load_q): their state is finite and the
// epilogue never writes them (`rows`). With several query tokens the columns are the block's
// (token, head) rows (block_rows.cuh), masked row by row.
// fp8 caches (T::kFp8InRegisters): ldmatrix reads the fp8 stage (16 keys × 32 depth bytes per
// x4) and the fragments become fp16 in registers; the depth order inside a 16-wide slab is
// permuted for the scores and the output rows (score_tile_fp8, output_tile_fp8).
#pragma once

#include <math.h>

#include "kernels/decode_params.cuh"
#include "kernels/decode_stages.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/ptx.cuh"

namespace mha {

template <class T>
struct ColumnsMath {
  static_assert(T::kHeadsAsColumns && T::kWarpSplitK && T::kWM == 8 && T::kWarpsM == 1 &&
                    T::kBM % 8 == 0,
                "heads as MMA columns: WM = 8, BM a multiple of 8, one warp row, warp split-K");
  using Elem = typename T::MmaElem;
  static constexpr int kColTiles = T::kBM / 8;        // n8 column tiles of 8 heads (C)
  static constexpr int kDepthTiles = T::kDepth / 16;  // 16-column slabs of the depth
  static constexpr int kKeyTiles = T::kWN / 16;       // 16-key blocks of this warp's keys
  static constexpr int kCpr = T::kChunksPerRow;

  // fp8: a 16-key × 32-byte ldmatrix.x4 is two depth slabs; rows of kFp8Cpr 16-byte chunks.
  static constexpr int kFp8Cpr = T::kKvChunksPerRow;
  static constexpr int kFp8RowBytes = T::kDepth;
  // Lane offsets held for the first slab pairs: the XOR of fp8_swizzled_bytes touches the low
  // 3 chunk bits (d64: 2 bits), so pair s + 4 is pair s's address + 128 bytes.
  static constexpr int kFp8PairOffsets = kFp8Cpr >= 8 ? 4 : 2;

  // Qᵀ as B fragments: depth slab × column tile × (depth 0-7, 8-15); fp8: see start_fp8.
  uint32_t q_frag[kDepthTiles][kColTiles][2];
  // This thread's heads of column tile c, c·8 + 2·(lane%4) and +1 (sum: its keys only).
  float head_max[kColTiles][2], head_sum[kColTiles][2];
  // Oᵀ: depth dt·16 + lane/4 (+8 for e ≥ 2), head c·8 + 2·(lane%4) + e%2; fp8: depth dt·16 +
  // 2·(lane/4) (+1 for e ≥ 2), see output_tile_fp8.
  float o_acc[kDepthTiles][kColTiles][4];
  // This lane's ldmatrix row addresses within a tile, for depth slabs 0-3 of key block 0 (the
  // swizzle XORs the chunk with the row's low 3 bits, lane % 8, so slab s + 4 is slab s's address
  // + 64 elements and key block kt is + kt·16 rows). Computed once: recomputed in the key loop
  // they cost about 50 integer instructions a tile (SASS).
  int k_lane_off[4], v_lane_off[4];
  // fp8: byte offsets of this lane's ldmatrix row for slab pairs 0-3 of the warp's key block 0,
  // the same for K (non-transposed) and V (transposed): matrix m = lane/8 is keys (m%2)·8 + 0-7
  // of chunk 2·pair + m/2. The warp's first key is in them: added per tile, ptxas recomputed it
  // from the thread index every tile (SASS).
  int fp8_lane_off[kFp8PairOffsets];

  __device__ __forceinline__ void start(const QChunks<T>& q, unsigned char* smem, int tid,
                                        int /*warp_m*/, int lane) {
    const Elem* q_s = stage_q<T>(q, smem, tid);
    if constexpr (T::kFp8InRegisters) {
      start_fp8(q_s, tid, lane);
    } else {
      // One ldmatrix.x4 reads two depth slabs of a column tile: matrix m is heads c·8 + 0-7 ×
      // depth chunk 4·kp + m.
#pragma unroll
      for (int kp = 0; kp < kDepthTiles / 2; ++kp)
#pragma unroll
        for (int c = 0; c < kColTiles; ++c) {
          uint32_t r[4];
          ptx::ldmatrix_x4(r, q_s + swizzled<kCpr>(c * 8 + lane % 8, kp * 4 + lane / 8));
          q_frag[2 * kp][c][0] = r[0];
          q_frag[2 * kp][c][1] = r[1];
          q_frag[2 * kp + 1][c][0] = r[2];
          q_frag[2 * kp + 1][c][1] = r[3];
        }
      const int mat = lane / 8;
#pragma unroll
      for (int slab = 0; slab < 4; ++slab) {
        // K as A: matrices (keys 0-7, depth 0-7), (keys 8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
        k_lane_off[slab] = swizzled<kCpr>((mat % 2) * 8 + lane % 8, slab * 2 + mat / 2);
        // Vᵀ as A, read transposed from V's key rows: (depth 0-7, keys 0-7), (8-15, 0-7),
        // (0-7, 8-15), (8-15, 8-15).
        v_lane_off[slab] = swizzled<kCpr>((mat / 2) * 8 + lane % 8, slab * 2 + mat % 2);
      }
    }
#pragma unroll
    for (int c = 0; c < kColTiles; ++c) {
      head_max[c][0] = head_max[c][1] = -INFINITY;
      head_sum[c][0] = head_sum[c][1] = 0.f;
    }
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
        o_acc[dt][c][0] = o_acc[dt][c][1] = o_acc[dt][c][2] = o_acc[dt][c][3] = 0.f;
  }

  // fp8: Q fragments in the permuted depth order of score_tile_fp8, and the ldmatrix lane offsets.
  __device__ __forceinline__ void start_fp8(const Elem* q_s, int tid, int lane) {
    const int g = lane / 4, t = lane % 4;  // the MMA fragments' groupID and thread in group
    // B = Qᵀ (k × n = depth × head): b0 holds k = 2t, 2t+1 and b1 k = 2t+8, 2t+9 of head g. With
    // k ↔ depth slab·16 + 4t + {0, 1} (k < 8) and + 4t + {2, 3} (k ≥ 8), (b0, b1) are 4
    // consecutive halves of Q's row c·8 + g: chunk 2·slab + t/2 (8 halves a chunk), halves 4·(t%2).
#pragma unroll
    for (int slab = 0; slab < kDepthTiles; ++slab)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c) {
        const uint2 v = *reinterpret_cast<const uint2*>(
            q_s + swizzled<kCpr>(c * 8 + g, 2 * slab + t / 2) + 4 * (t % 2));
        q_frag[slab][c][0] = v.x;
        q_frag[slab][c][1] = v.y;
      }
    const int mat = lane / 8;
    const int warp_key0 =
        tid / 32 * T::kWN;  // the kernel's warp_key0 (one warp row: warp_n = warp)
#pragma unroll
    for (int pair = 0; pair < kFp8PairOffsets; ++pair)
      fp8_lane_off[pair] =
          warp_key0 * kFp8RowBytes +
          fp8_swizzled_bytes<kFp8Cpr>((mat % 2) * 8 + lane % 8, 2 * pair + mat / 2);
  }

  // fp8: where this lane's ldmatrix row of slab pair `pair` of the warp's key block kt lies in a
  // stage tile.
  __device__ __forceinline__ const unsigned char* fp8_row(const unsigned char* tile, int kt,
                                                          int pair) const {
    return tile + kt * 16 * kFp8RowBytes + fp8_lane_off[pair % kFp8PairOffsets] +
           (pair / kFp8PairOffsets) * 128;
  }

  __device__ __forceinline__ static void clear_scores(float (&s)[kKeyTiles][kColTiles][4]) {
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
        s[kt][c][0] = s[kt][c][1] = s[kt][c][2] = s[kt][c][3] = 0.f;
  }

  // fp8 Sᵀ. ldmatrix.x4 over 16 keys × chunks (2·pair, 2·pair + 1) gives r[m], m = 2·h + u, for
  // slab 2·pair + h: keys u·8 + g, bytes 4t..4t+3 of the slab (g = lane/4, t = lane%4). The A
  // fragment (16 keys × 16 k) wants a0 = (key g, k 2t, 2t+1), a1 = (key g+8, same k), a2 =
  // (key g, k 2t+8, 2t+9), a3 = (key g+8, same); taking a0 = cvt(lo16 r[2h]), a1 = cvt(lo16
  // r[2h+1]), a2 = cvt(hi16 r[2h]), a3 = cvt(hi16 r[2h+1]) maps k 2t+j ↔ depth 4t+j and k 2t+8+j
  // ↔ depth 4t+2+j (j = 0, 1), a permutation of the slab that q_frag follows (start_fp8), so the
  // sum over depth is unchanged. Each converted A fragment feeds the C column tiles.
  __device__ __forceinline__ void score_tile_fp8(const unsigned char* k_s,
                                                 float (&s)[kKeyTiles][kColTiles][4]) const {
    using Fp8 = typename T::KvElem;
    // Slab pairs fetched at once: BK / 32 (at least one pair, so BK 16 fetches 32).
    constexpr int kPairsPerFetch = T::kBK >= 32 ? T::kBK / 32 : 1;
    constexpr int kPairs = kDepthTiles / 2;
    static_assert(kPairs % kPairsPerFetch == 0, "BK must divide the depth");
    clear_scores(s);
#pragma unroll
    for (int kb = 0; kb < kPairs / kPairsPerFetch; ++kb) {
      uint32_t k_raw[kKeyTiles][kPairsPerFetch][4];
#pragma unroll
      for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
        for (int kp = 0; kp < kPairsPerFetch; ++kp)
          ptx::ldmatrix_x4(k_raw[kt][kp], fp8_row(k_s, kt, kb * kPairsPerFetch + kp));
#pragma unroll
      for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
        for (int kp = 0; kp < kPairsPerFetch; ++kp)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t keys_lo = k_raw[kt][kp][2 * h], keys_hi = k_raw[kt][kp][2 * h + 1];
            const uint32_t a[4] = {ptx::fp8x2_to_half2_of<Fp8, false>(keys_lo),
                                   ptx::fp8x2_to_half2_of<Fp8, false>(keys_hi),
                                   ptx::fp8x2_to_half2_of<Fp8, true>(keys_lo),
                                   ptx::fp8x2_to_half2_of<Fp8, true>(keys_hi)};
#pragma unroll
            for (int c = 0; c < kColTiles; ++c) {
              const uint32_t(&b)[2] = q_frag[2 * (kb * kPairsPerFetch + kp) + h][c];
              ptx::Mma<Elem>::run(s[kt][c], a, b[0], b[1]);
            }
          }
    }
  }

  // fp8 Oᵀ += Vᵀ·Pᵀ for key block kt. ldmatrix.x4.trans over 16 keys × chunks (2·pair,
  // 2·pair + 1) gives, of each 8 × 8 matrix of b16 (rows: keys, b16 column g: depth bytes 2g and
  // 2g+1), rows 2t and 2t+1 of column g: bytes (V[2t][2g], V[2t][2g+1], V[2t+1][2g],
  // V[2t+1][2g+1]), low byte first. The byte permute 0x3120 makes them (V[2t][2g], V[2t+1][2g] |
  // V[2t][2g+1], V[2t+1][2g+1]): keys 2t, 2t+1 at depth 2g (low half) and 2g+1 (high half). The
  // A fragment (16 depth rows × 16 keys) wants a0 = (row g, keys 2t, 2t+1), a1 = (row g+8, same
  // keys), a2 = (row g, keys 2t+8, 2t+9), a3 = (row g+8, same), so MMA row g is depth 2g and
  // row g+8 depth 2g+1 of the slab: a0, a1 = the halves of keys 0-7's register, a2, a3 of keys
  // 8-15's. Pᵀ's keys stay in natural order; the accumulator rows carry the permutation
  // (to_merge_area). Each converted A fragment feeds the C column tiles (b0[c], b1[c]).
  __device__ __forceinline__ void output_tile_fp8(const unsigned char* v_s, int kt,
                                                  const uint32_t (&b0)[kColTiles],
                                                  const uint32_t (&b1)[kColTiles]) {
    using Fp8 = typename T::KvElem;
#pragma unroll
    for (int pair = 0; pair < kDepthTiles / 2; ++pair) {
      uint32_t v_raw[4];
      ptx::ldmatrix_x4_trans(v_raw, fp8_row(v_s, kt, pair));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t keys_lo = __byte_perm(v_raw[2 * h], 0, 0x3120);
        const uint32_t keys_hi = __byte_perm(v_raw[2 * h + 1], 0, 0x3120);
        const uint32_t a[4] = {ptx::fp8x2_to_half2_of<Fp8, false>(keys_lo),
                               ptx::fp8x2_to_half2_of<Fp8, true>(keys_lo),
                               ptx::fp8x2_to_half2_of<Fp8, false>(keys_hi),
                               ptx::fp8x2_to_half2_of<Fp8, true>(keys_hi)};
#pragma unroll
        for (int c = 0; c < kColTiles; ++c)
          ptx::Mma<Elem>::run(o_acc[2 * pair + h][c], a, b0[c], b1[c]);
      }
    }
  }

  // Sᵀ for this warp's WN keys of a tile, K fragments fetched one BK slab at a time, each fed
  // to the C column tiles.
  __device__ __forceinline__ void score_tile(const Elem* k_s, int warp_key0, int lane,
                                             float (&s)[kKeyTiles][kColTiles][4]) const {
    constexpr int kSlabs = T::kBK / 16;
    clear_scores(s);
#pragma unroll
    for (int kb = 0; kb < T::kDepth / T::kBK; ++kb) {
      uint32_t k_frag[kKeyTiles][kSlabs][4];
#pragma unroll
      for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
        for (int ks = 0; ks < kSlabs; ++ks) {
          const int slab = kb * kSlabs + ks;
          ptx::ldmatrix_x4(k_frag[kt][ks], k_s + (warp_key0 + kt * 16) * kCpr * 8 +
                                               k_lane_off[slab % 4] + (slab / 4) * 64);
        }
#pragma unroll
      for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
        for (int ks = 0; ks < kSlabs; ++ks)
#pragma unroll
          for (int c = 0; c < kColTiles; ++c) {
            const uint32_t(&b)[2] = q_frag[kb * kSlabs + ks][c];
            ptx::Mma<Elem>::run(s[kt][c], k_frag[kt][ks], b[0], b[1]);
          }
    }
  }

  // Score element e of key block kt, column tile c is key first_key + kt·16 + lane/4 + 8·(e/2),
  // head c·8 + 2·(lane%4) + e%2: scale into log2 units and, with kCheckKeys, hide the keys a
  // head's row does not see.
  template <bool kCheckKeys>
  __device__ __forceinline__ static void scale_scores(float (&s)[kKeyTiles][kColTiles][4],
                                                      int first_key, int lane,
                                                      const KeyBounds& keys,
                                                      const ScoreScaling& scaling) {
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = MmaAccumulator::row(first_key + kt * 16, lane, e);
          const int row = MmaAccumulator::col(c * 8, lane, e);
          s[kt][c][e] = scaled_score<T, kCheckKeys>(s[kt][c][e], key, row, keys, scaling);
        }
  }

  // Scale and hide, then each head's tile max over the warp. A warp whose keys are all visible
  // skips the per-key test, as the rows math does (mask_and_tile_max in decode_stages.cuh).
  __device__ __forceinline__ static void mask_and_tile_max(float (&s)[kKeyTiles][kColTiles][4],
                                                           int first_key, int lane,
                                                           const KeyBounds& keys,
                                                           const ScoreScaling& scaling,
                                                           float (&tile_max)[kColTiles][2]) {
    if (first_key >= keys.all_lo && first_key + kKeyTiles * 16 <= keys.all_end)
      scale_scores<false>(s, first_key, lane, keys, scaling);
    else
      scale_scores<true>(s, first_key, lane, keys, scaling);
#pragma unroll
    for (int c = 0; c < kColTiles; ++c) tile_max[c][0] = tile_max[c][1] = -INFINITY;
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) tile_max[c][e % 2] = fmaxf(tile_max[c][e % 2], s[kt][c][e]);
#pragma unroll
    for (int c = 0; c < kColTiles; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int lanes = 4; lanes < 32; lanes *= 2)
          tile_max[c][h] =
              fmaxf(tile_max[c][h], __shfl_xor_sync(0xffffffffu, tile_max[c][h], lanes));
  }

  // One landed tile: Sᵀ, mask, the online-softmax update of each head, then Oᵀ += Vᵀ·Pᵀ.
  __device__ __forceinline__ void fold(unsigned char* /*smem*/, const Elem* k_s, const Elem* v_s,
                                       int first_key, int warp_key0, const KeyBounds& keys,
                                       const ScoreScaling& scaling, int /*warp_m*/, int /*warp_n*/,
                                       int lane) {
    float s[kKeyTiles][kColTiles][4];
    if constexpr (T::kFp8InRegisters)
      score_tile_fp8(reinterpret_cast<const unsigned char*>(k_s), s);
    else
      score_tile(k_s, warp_key0, lane, s);
    float tile_max[kColTiles][2];
    mask_and_tile_max(s, first_key, lane, keys, scaling, tile_max);
    // Lazy rescaling: the heads' reference maxima move only when one of them falls behind.
    if (warp_moves_max<2>(head_max, tile_max)) {
      float alpha[kColTiles][2];
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float m_new = fmaxf(head_max[c][h], tile_max[c][h]);
          alpha[c][h] = rescale(head_max[c][h], m_new);
          head_sum[c][h] *= alpha[c][h];
          head_max[c][h] = m_new;
        }
#pragma unroll
      for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
        for (int c = 0; c < kColTiles; ++c)
#pragma unroll
          for (int e = 0; e < 4; ++e) o_acc[dt][c][e] *= alpha[c][e % 2];
    }
    float base[kColTiles][2];
#pragma unroll
    for (int c = 0; c < kColTiles; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) base[c][h] = exp_base(head_max[c][h]);
    float sum[kColTiles][2];
#pragma unroll
    for (int c = 0; c < kColTiles; ++c) sum[c][0] = sum[c][1] = 0.f;
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[kt][c][e] = exp2_weight(s[kt][c][e] - base[c][e % 2]);
          sum[c][e % 2] += s[kt][c][e];
        }
#pragma unroll
    for (int c = 0; c < kColTiles; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) head_sum[c][h] += sum[c][h];
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt) {
      // (c0, c1) of column tile c is the 8 × 8 block keys 0-7 × its heads in fragment order; its
      // transpose is the B fragment of keys 0-7 (b0[c]). (c2, c3): keys 8-15 (b1[c]).
      uint32_t b0[kColTiles], b1[kColTiles];
#pragma unroll
      for (int c = 0; c < kColTiles; ++c) {
        b0[c] = ptx::movmatrix_trans(ptx::pack2<Elem>(s[kt][c][0], s[kt][c][1]));
        b1[c] = ptx::movmatrix_trans(ptx::pack2<Elem>(s[kt][c][2], s[kt][c][3]));
      }
      if constexpr (T::kFp8InRegisters) {
        output_tile_fp8(reinterpret_cast<const unsigned char*>(v_s), kt, b0, b1);
      } else {
#pragma unroll
        for (int dt = 0; dt < kDepthTiles; ++dt) {
          uint32_t a[4];  // Vᵀ, depth slab dt × this key block, for every column tile
          ptx::ldmatrix_x4_trans(
              a, v_s + (warp_key0 + kt * 16) * kCpr * 8 + v_lane_off[dt % 4] + (dt / 4) * 64);
#pragma unroll
          for (int c = 0; c < kColTiles; ++c) ptx::Mma<Elem>::run(o_acc[dt][c], a, b0[c], b1[c]);
        }
      }
    }
  }

  __device__ __forceinline__ void dequantise_output(float v_scale) {
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) o_acc[dt][c][e] *= v_scale;
  }

  // (max, sum, unnormalised output) of each of the BM heads, padding heads included (the
  // merge area holds BM rows; write_rows and the combines read only the real ones), into this
  // warp's copy of the merge area.
  __device__ __forceinline__ void to_merge_area(const MergeArea<T>& m, int /*warp_m*/, int warp_n,
                                                int lane) const {
    constexpr int kBM = T::kBM, kDepth = T::kDepth;
#pragma unroll
    for (int c = 0; c < kColTiles; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float sum = head_sum[c][h];
#pragma unroll
        for (int lanes = 4; lanes < 32; lanes *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, lanes);
        if (lane < 4) {
          m.max[warp_n * kBM + c * 8 + 2 * lane + h] = head_max[c][h];
          m.sum[warp_n * kBM + c * 8 + 2 * lane + h] = sum;
        }
      }
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
      for (int c = 0; c < kColTiles; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int head = c * 8 + 2 * (lane % 4) + e % 2;
          const int col = T::kFp8InRegisters
                              ? dt * 16 + 2 * (lane / 4) + e / 2  // output_tile_fp8's rows
                              : dt * 16 + lane / 4 + 8 * (e / 2);
          m.o[(warp_n * kBM + head) * kDepth + col] = o_acc[dt][c][e];
        }
  }
};

}  // namespace mha
