// Decode masks as compile-time policies. The query is the newest token (position n - 1), so
// every mask of the contract leaves a contiguous visible key range [visible_begin, n): whole key
// tiles before it are never loaded.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

#include "kernels/decode_params.cuh"

namespace mha {

// Mask kinds as runtime values, for the reference implementations and the host.
enum class MaskKind : int { kNull = 0, kCausal = 1, kWindow = 2, kChunked = 3 };

// The contract's definition key by key (used by the references, independent of the policies).
__host__ __device__ inline bool key_visible(MaskKind kind, int key, int n, int window, int chunk) {
  const int pos = n - 1;
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

// kVisibleFromZero: the visible range starts at key 0 whatever the length, so a block's first
// tile is known before the length (decode_kernel.cuh starts its copy early).
struct NullMask {
  static constexpr MaskKind kKind = MaskKind::kNull;
  static constexpr bool kVisibleFromZero = true;
  __host__ __device__ static inline int visible_begin(int, const DecodeParams&) { return 0; }
};

// One query at the last position sees every key: causal equals null for decode.
struct CausalMask {
  static constexpr MaskKind kKind = MaskKind::kCausal;
  static constexpr bool kVisibleFromZero = true;
  __host__ __device__ static inline int visible_begin(int, const DecodeParams&) { return 0; }
};

struct SlidingWindowMask {
  static constexpr MaskKind kKind = MaskKind::kWindow;
  static constexpr bool kVisibleFromZero = false;
  __host__ __device__ static inline int visible_begin(int n, const DecodeParams& p) {
    const int begin = n - p.window;
    return begin > 0 ? begin : 0;
  }
};

struct ChunkedMask {
  static constexpr MaskKind kKind = MaskKind::kChunked;
  static constexpr bool kVisibleFromZero = false;
  __host__ __device__ static inline int visible_begin(int n, const DecodeParams& p) {
    return n > 0 ? ((n - 1) / p.chunk) * p.chunk : 0;
  }
};

}  // namespace mha
