// Heads as the MMA's columns (BM = WM = 8, warp split-K): the stages of decode_stages.cuh for a
// block of at most 8 query heads, computed transposed.
//   scores  Sᵀ = K·Qᵀ   A: 16 keys × 16 depth of the K tile (ldmatrix), B: Qᵀ, 16 depth × 8 heads,
//                       held in registers; C: 16 keys × 8 heads
//   output  Oᵀ = Vᵀ·Pᵀ  A: 16 depth × 16 keys of the V tile (ldmatrix.trans), B: Pᵀ, 16 keys ×
//                       8 heads, from the score accumulators by one movmatrix.trans per 8 × 8
//                       block; C: 16 depth × 8 heads
// On the 16-row path a group of at most 8 fills at most half of every MMA's rows (a group of 4, a
// quarter); here the 8 heads fill its n8 columns, so a tile takes half the MMAs and half the
// output accumulators. Thread lane holds heads 2·(lane%4) and +1 of keys (or depth columns)
// lane/4 and lane/4 + 8, so the softmax reduces over keys across the lanes of equal lane%4
// (xor 4, 8, 16) and each thread's two heads keep their own (max, sum).
#pragma once

#include <math.h>

#include "decode_params.cuh"
#include "decode_stages.cuh"
#include "decode_traits.cuh"
#include "online_softmax.cuh"
#include "ptx.cuh"

namespace mha {

template <class T>
struct ColumnsMath {
  static_assert(T::kHeadsAsColumns && T::kWarpSplitK && T::kWM == 8 && T::kWarpsM == 1,
                "heads as MMA columns: BM = WM = 8 with warp split-K");
  using Elem = typename T::MmaElem;
  static constexpr int kDepthTiles = T::kDepth / 16;  // 16-column slabs of the depth
  static constexpr int kKeyTiles = T::kWN / 16;       // 16-key blocks of this warp's keys
  static constexpr int kCpr = T::kChunksPerRow;

  uint32_t q_frag[kDepthTiles][2];  // Qᵀ as B fragments: depth slab × (depth 0-7, 8-15)
  float head_max[2], head_sum[2];   // this thread's heads, 2·(lane%4) and +1 (sum: its keys only)
  float o_acc[kDepthTiles][4];      // Oᵀ: depth dt·16 + lane/4 (+8 for e ≥ 2), head 2·(lane%4) + e%2
  // This lane's ldmatrix row addresses within a tile, for depth slabs 0-3 of key block 0 (the
  // swizzle XORs the chunk with the row's low 3 bits, lane % 8, so slab s + 4 is slab s's address
  // + 64 elements and key block kt is + kt·16 rows). Computed once: recomputed in the key loop
  // they cost about 50 integer instructions a tile (SASS).
  int k_lane_off[4], v_lane_off[4];

  __device__ __forceinline__ void start(const DecodeParams& p, unsigned char* smem, int b,
                                        int head0, int rows, int tid, int /*warp_m*/, int lane) {
    const Elem* q_s = stage_q<T>(p, smem, b, head0, rows, tid);
    // One ldmatrix.x4 reads two depth slabs: matrix m is 8 heads × depth chunk 4·kp + m.
#pragma unroll
    for (int kp = 0; kp < kDepthTiles / 2; ++kp) {
      uint32_t r[4];
      ptx::ldmatrix_x4(r, q_s + swizzled<kCpr>(lane % 8, kp * 4 + lane / 8));
      q_frag[2 * kp][0] = r[0];
      q_frag[2 * kp][1] = r[1];
      q_frag[2 * kp + 1][0] = r[2];
      q_frag[2 * kp + 1][1] = r[3];
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
    head_max[0] = head_max[1] = -INFINITY;
    head_sum[0] = head_sum[1] = 0.f;
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt) o_acc[dt][0] = o_acc[dt][1] = o_acc[dt][2] = o_acc[dt][3] = 0.f;
  }

  // Sᵀ for this warp's WN keys of a tile, K fragments fetched one BK slab at a time.
  __device__ __forceinline__ void score_tile(const Elem* k_s, int warp_key0, int lane,
                                             float (&s)[kKeyTiles][4]) const {
    constexpr int kSlabs = T::kBK / 16;
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt) s[kt][0] = s[kt][1] = s[kt][2] = s[kt][3] = 0.f;
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
        for (int ks = 0; ks < kSlabs; ++ks) {
          const uint32_t(&b)[2] = q_frag[kb * kSlabs + ks];
          ptx::Mma<Elem>::run(s[kt], k_frag[kt][ks], b[0], b[1]);
        }
    }
  }

  // Score element e of key block kt is key first_key + kt·16 + lane/4 + 8·(e/2), head 2·(lane%4)
  // + e%2: scale into log2 units, hide invisible keys, and each head's tile max over the warp.
  __device__ __forceinline__ static void mask_and_tile_max(float (&s)[kKeyTiles][4], int first_key,
                                                           int lane, int key_lo, int n,
                                                           const ScoreScaling& scaling,
                                                           float (&tile_max)[2]) {
    tile_max[0] = tile_max[1] = -INFINITY;
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = first_key + kt * 16 + lane / 4 + 8 * (e / 2);
        const bool visible = key >= key_lo && key < n;
        const float x = T::kSoftCap ? scaling.mul_out * tanhf(s[kt][e] * scaling.mul_in)
                                    : s[kt][e] * scaling.mul_in;
        s[kt][e] = visible ? x : -INFINITY;
        tile_max[e % 2] = fmaxf(tile_max[e % 2], s[kt][e]);
      }
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int lanes = 4; lanes < 32; lanes *= 2)
        tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], lanes));
  }

  // One landed tile: Sᵀ, mask, the online-softmax update of both heads, then Oᵀ += Vᵀ·Pᵀ.
  __device__ __forceinline__ void fold(unsigned char* /*smem*/, const Elem* k_s, const Elem* v_s,
                                       int first_key, int warp_key0, const BlockWork& w,
                                       const ScoreScaling& scaling, int /*warp_m*/,
                                       int /*warp_n*/, int lane) {
    float s[kKeyTiles][4];
    score_tile(k_s, warp_key0, lane, s);
    float tile_max[2];
    mask_and_tile_max(s, first_key, lane, w.key_lo, w.n, scaling, tile_max);
    float alpha[2], base[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float m_new = fmaxf(head_max[h], tile_max[h]);
      alpha[h] = rescale(head_max[h], m_new);
      base[h] = exp_base(m_new);
      head_max[h] = m_new;
    }
    float sum[2] = {0.f, 0.f};
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[kt][e] = exp2f(s[kt][e] - base[e % 2]);
        sum[e % 2] += s[kt][e];
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) head_sum[h] = head_sum[h] * alpha[h] + sum[h];
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o_acc[dt][e] *= alpha[e % 2];
#pragma unroll
    for (int kt = 0; kt < kKeyTiles; ++kt) {
      // (c0, c1) is the 8 × 8 block keys 0-7 × heads in fragment order; its transpose is the B
      // fragment of keys 0-7 (b0). (c2, c3): keys 8-15 (b1).
      const uint32_t b0 = ptx::movmatrix_trans(ptx::pack2<Elem>(s[kt][0], s[kt][1]));
      const uint32_t b1 = ptx::movmatrix_trans(ptx::pack2<Elem>(s[kt][2], s[kt][3]));
#pragma unroll
      for (int dt = 0; dt < kDepthTiles; ++dt) {
        uint32_t a[4];  // Vᵀ, depth slab dt × this key block
        ptx::ldmatrix_x4_trans(a, v_s + (warp_key0 + kt * 16) * kCpr * 8 + v_lane_off[dt % 4] +
                                      (dt / 4) * 64);
        ptx::Mma<Elem>::run(o_acc[dt], a, b0, b1);
      }
    }
  }

  __device__ __forceinline__ void dequantise_output(float v_scale) {
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o_acc[dt][e] *= v_scale;
  }

  // (max, sum, unnormalised output) of each head into this warp's copy of the merge area.
  __device__ __forceinline__ void to_merge_area(const MergeArea<T>& m, int /*warp_m*/, int warp_n,
                                                int lane) const {
    constexpr int kBM = T::kBM, kDepth = T::kDepth;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = head_sum[h];
#pragma unroll
      for (int lanes = 4; lanes < 32; lanes *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, lanes);
      if (lane < 4) {
        m.max[warp_n * kBM + 2 * lane + h] = head_max[h];
        m.sum[warp_n * kBM + 2 * lane + h] = sum;
      }
    }
#pragma unroll
    for (int dt = 0; dt < kDepthTiles; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int head = 2 * (lane % 4) + e % 2;
        const int col = dt * 16 + lane / 4 + 8 * (e / 2);
        m.o[(warp_n * kBM + head) * kDepth + col] = o_acc[dt][e];
      }
  }
};

}  // namespace mha
