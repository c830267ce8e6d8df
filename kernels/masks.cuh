// Decode masks as compile-time policies. A sequence of n keys carries q_len query tokens, token t
// at position pos = n - q_len + t (one token: the newest, n - 1). Every mask of the contract
// leaves each token a contiguous visible key range [begin_at(pos), end), and a later token's range
// starts no earlier: a block's tokens together read [visible_begin(n), n), and whole key tiles
// before it are never loaded.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

#include "kernels/decode_params.cuh"

namespace mha {

// Mask kinds as runtime values, for the reference implementations and the host.
enum class MaskKind : int { kNull = 0, kCausal = 1, kWindow = 2, kChunked = 3 };

// The contract's definition key by key (used by the references, independent of the policies):
// whether token `token` of q_len, in a sequence of n keys, sees key `key`. The null mask shows
// every token all n keys; the others are causal, from the token's own position.
__host__ __device__ inline bool key_visible(MaskKind kind, int key, int n, int window, int chunk,
                                            int q_len = 1, int token = 0) {
  const int pos = n - q_len + token;
  switch (kind) {
    case MaskKind::kNull:
      return key < n;
    case MaskKind::kCausal:
      return key <= pos;
    case MaskKind::kWindow:
      return key <= pos && pos - window < key;
    case MaskKind::kChunked:
      return key <= pos && key / chunk == pos / chunk;
  }
  return false;
}

// Each policy: begin_at(pos, window, chunk), the first key a token at `pos` sees (0 for a
// token before the first key); kCausalTokens, whether a token's range ends at its position (pos
// + 1) rather than at n; kVisibleFromZero, whether the visible range starts at key 0 whatever
// the length, so a block's first tile is known before the length (decode_kernel.cuh starts its
// copy early).
struct NullMask {
  static constexpr MaskKind kKind = MaskKind::kNull;
  static constexpr bool kVisibleFromZero = true;
  static constexpr bool kCausalTokens = false;
  __host__ __device__ static inline int begin_at(int, int, int) { return 0; }
};

// One query at the last position sees every key: causal equals null for single-token steps.
struct CausalMask {
  static constexpr MaskKind kKind = MaskKind::kCausal;
  static constexpr bool kVisibleFromZero = true;
  static constexpr bool kCausalTokens = true;
  __host__ __device__ static inline int begin_at(int, int, int) { return 0; }
};

struct SlidingWindowMask {
  static constexpr MaskKind kKind = MaskKind::kWindow;
  static constexpr bool kVisibleFromZero = false;
  static constexpr bool kCausalTokens = true;
  __host__ __device__ static inline int begin_at(int pos, int window, int) {
    const int begin = pos + 1 - window;
    return begin > 0 ? begin : 0;
  }
};

struct ChunkedMask {
  static constexpr MaskKind kKind = MaskKind::kChunked;
  static constexpr bool kVisibleFromZero = false;
  static constexpr bool kCausalTokens = true;
  __host__ __device__ static inline int begin_at(int pos, int, int chunk) {
    return pos > 0 ? (pos / chunk) * chunk : 0;
  }
};

// The first key any of the step's tokens sees: the first token's (at n - q_len).
template <class Mask>
__host__ __device__ inline int visible_begin(int n, const DecodeParams& p) {
  return Mask::begin_at(n - p.q_len, p.window, p.chunk);
}

// The end of token `token`'s visible range in a sequence of n keys.
template <class Mask>
__host__ __device__ inline int token_end(int n, int q_len, int token) {
  if constexpr (!Mask::kCausalTokens) return n;
  const int end = n - q_len + token + 1;
  return end < n ? end : n;
}

}  // namespace mha
