// Decode masks as compile-time policies. A sequence of n keys carries q_len query tokens, token t
// at position pos = n - q_len + t (one token: the newest, n - 1). Every mask of the contract
// leaves each token a contiguous visible key range [begin_at(pos), end), and a later token's range
// starts no earlier: a block's tokens together read [visible_begin(n), n), and whole key tiles
// before it are never loaded. The tree mask (speculative drafts as a tree) keeps the cache before
// the drafts whole and picks each token's draft keys from a bit mask (tree_sees).
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

#include "kernels/decode_params.cuh"

namespace mha {

// Mask kinds as runtime values, for the reference implementations and the host.
enum class MaskKind : int { kNull = 0, kCausal = 1, kWindow = 2, kChunked = 3, kTree = 4 };

// A tree of q_len draft tokens, as TensorRT-LLM's XQA takes it: one 32-bit word per token
// ([batch][q_len], DecodeParams::tree_mask), bit j set where the token attends to draft j (the
// key at n - q_len + j). A token's ancestors and itself, in practice; any bits are computed.
using TreeWord = unsigned;
constexpr int kTreeWordBits = 32;
static_assert(kMaxQueryTokens <= kTreeWordBits, "a tree token's drafts fit one word");

// Whether a tree token with mask word `word`, in a sequence of n keys of which the last q_len are
// the drafts, sees `key`: every key before the drafts, and the drafts its bits name.
__host__ __device__ inline bool tree_sees(TreeWord word, int key, int n, int q_len) {
  const int draft = key - (n - q_len);
  return key < n && (draft < 0 || ((word >> draft) & 1u) != 0);
}

// The contract's definition key by key (used by the references, independent of the policies):
// whether token `token` of q_len, in a sequence of n keys, sees key `key`. The null mask shows
// every token all n keys; the tree mask, what the token's word `tree` names (tree_sees); the
// others are causal, from the token's own position.
__host__ __device__ inline bool key_visible(MaskKind kind, int key, int n, int window, int chunk,
                                            int q_len = 1, int token = 0, TreeWord tree = 0) {
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
    case MaskKind::kTree:
      return tree_sees(tree, key, n, q_len);
  }
  return false;
}

// Each policy: begin_at(pos, window, chunk), the first key a token at `pos` sees (0 for a
// token before the first key); kCausalTokens, whether a token's range ends at its position (pos
// + 1) rather than at n; kVisibleFromZero, whether the visible range starts at key 0 whatever
// the length, so a block's first tile is known before the length (decode_kernel.cuh starts its
// copy early); kTreeTokens, whether a token's draft keys come from its tree word instead.
struct NullMask {
  static constexpr MaskKind kKind = MaskKind::kNull;
  static constexpr bool kVisibleFromZero = true;
  static constexpr bool kCausalTokens = false;
  static constexpr bool kTreeTokens = false;
  __host__ __device__ static inline int begin_at(int, int, int) { return 0; }
};

// One query at the last position sees every key: causal equals null for single-token steps.
struct CausalMask {
  static constexpr MaskKind kKind = MaskKind::kCausal;
  static constexpr bool kVisibleFromZero = true;
  static constexpr bool kCausalTokens = true;
  static constexpr bool kTreeTokens = false;
  __host__ __device__ static inline int begin_at(int, int, int) { return 0; }
};

struct SlidingWindowMask {
  static constexpr MaskKind kKind = MaskKind::kWindow;
  static constexpr bool kVisibleFromZero = false;
  static constexpr bool kCausalTokens = true;
  static constexpr bool kTreeTokens = false;
  __host__ __device__ static inline int begin_at(int pos, int window, int) {
    const int begin = pos + 1 - window;
    return begin > 0 ? begin : 0;
  }
};

struct ChunkedMask {
  static constexpr MaskKind kKind = MaskKind::kChunked;
  static constexpr bool kVisibleFromZero = false;
  static constexpr bool kCausalTokens = true;
  static constexpr bool kTreeTokens = false;
  __host__ __device__ static inline int begin_at(int pos, int, int chunk) {
    return pos > 0 ? (pos / chunk) * chunk : 0;
  }
};

// Every token sees the cache before the drafts; a token sees no draft after its own position
// when the words keep to a tree's order (the kernels test each draft key's bit all the same).
struct TreeMask {
  static constexpr MaskKind kKind = MaskKind::kTree;
  static constexpr bool kVisibleFromZero = true;
  static constexpr bool kCausalTokens = true;
  static constexpr bool kTreeTokens = true;
  __host__ __device__ static inline int begin_at(int, int, int) { return 0; }
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
