// Which query rows one decode block computes, and which keys each of them sees.
// A KV head's query rows are its group's heads for each of the step's q_len tokens, numbered
// token first, then head in the group (decode_params.cuh): local row t * group + g. The block
// takes BM consecutive ones, so one K/V read serves every token. With one token the rows are the
// group's heads and every row sees the same keys; with several, token t at position
// n - q_len + t sees its own range (masks.cuh), and the mask is taken row by row.
#pragma once

#include "kernels/decode_params.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/masks.cuh"

namespace mha {

// `count` real rows (the rest of the BM are padding) from local row `local0` of KV head
// `kv_head`; `first` is the sequence-local query row of the first (query_row's numbering).
struct BlockRows {
  int kv_head, local0, count, first;
};

// The rows of block `unit` along the KV heads x row blocks axis of the grid.
template <class T>
__device__ __forceinline__ BlockRows block_rows(const DecodeParams& p, int unit) {
  const int per_kv_head = T::kMultiToken ? T::kGroup * p.q_len : T::kGroup;
  const int blocks = blocks_per_kv_head<T>(p.q_len);
  const int kv_head = unit / blocks, local0 = (unit % blocks) * T::kBM;
  return {kv_head, local0, min(T::kBM, per_kv_head - local0), kv_head * per_kv_head + local0};
}

// The block's rows of sequence b's own tokens: in a ragged step (cu_seqlens_q) the rows past its
// last token are padding (no Q loaded, nothing written), and a block may hold none of them.
template <class T>
__device__ __forceinline__ BlockRows sequence_rows(const DecodeParams& p, BlockRows rows, int b) {
  if constexpr (T::kMultiToken) {
    if (p.cu_seqlens_q != nullptr) {
      const int real = T::kGroup * sequence_tokens<true>(p, b).count - rows.local0;
      rows.count = max(0, min(rows.count, real));
    }
  }
  return rows;
}

// Row r of the block (0 .. count - 1) as (token, head).
template <class T>
__device__ __forceinline__ QueryRow block_query_row(const BlockRows& rows, int r) {
  if constexpr (!T::kMultiToken) return {0, rows.first + r};
  const int local = rows.local0 + r;
  return {local / T::kGroup, rows.kv_head * T::kGroup + local % T::kGroup};
}

// Whether the rows of a block see different keys: several tokens under a mask that ends each
// token's range at its own position.
template <class T>
constexpr bool per_row_keys() {
  return T::kMultiToken && T::Mask::kCausalTokens;
}

// The keys the block's rows see. [all_lo, all_end): the keys every row sees, what a warp tests
// to skip the per-key mask (a single token's whole visible range). With per-row keys, row r's
// token t = (local0 + r) / group sees [begin_at(first_pos + t), first_pos + t] (first_pos =
// n - q_len, token 0's position; a ragged step's sequence counts its own tokens); the masked path
// computes that per score. Under the tree mask every row sees the keys before first_pos and token
// t the drafts its word names (`tree`: the sequence's words); those tiles take the masked path, a
// word load per score.
struct KeyBounds {
  int all_lo, all_end;
  int n, first_pos, local0, window, chunk;
  const TreeWord* tree;
};

template <class T>
__device__ __forceinline__ KeyBounds key_bounds(const DecodeParams& p, const BlockRows& rows, int b,
                                                int key_lo, int n) {
  // Single-token instances keep p.q_len (the launcher checked it is 1).
  const SeqTokens seq =
      T::kMultiToken ? sequence_tokens<true>(p, b) : SeqTokens{b * p.q_len, p.q_len};
  KeyBounds kb{key_lo, n, n, n - seq.count, rows.local0, p.window, p.chunk, nullptr};
  if constexpr (T::Mask::kTreeTokens) {
    kb.all_end = kb.first_pos > key_lo ? kb.first_pos : key_lo;
    kb.tree = p.tree_mask + seq.first;
  } else if constexpr (per_row_keys<T>()) {
    // The block's first token ends the range every row sees, its last token starts it.
    const int first_token = rows.local0 / T::kGroup;
    const int last_token = (rows.local0 + rows.count - 1) / T::kGroup;
    kb.all_lo = T::Mask::begin_at(kb.first_pos + last_token, p.window, p.chunk);
    kb.all_end = token_end<typename T::Mask>(n, seq.count, first_token);
  }
  return kb;
}

// Whether block row `row` (0 .. BM - 1; padding rows too) sees `key`, for a score the warp did
// not find inside [all_lo, all_end).
template <class T>
__device__ __forceinline__ bool row_sees_key(const KeyBounds& kb, int row, int key) {
  if constexpr (T::Mask::kTreeTokens) {
    const int q_len = kb.n - kb.first_pos, token = (kb.local0 + row) / T::kGroup;
    if (token >= q_len) return false;  // a padding row past the last token: no word of its own
    return tree_sees(__ldg(kb.tree + token), key, kb.n, q_len);
  } else if constexpr (per_row_keys<T>()) {
    const int pos = kb.first_pos + (kb.local0 + row) / T::kGroup;
    return key >= T::Mask::begin_at(pos, kb.window, kb.chunk) && key <= pos && key < kb.n;
  }
  return key >= kb.all_lo && key < kb.all_end;
}

}  // namespace mha
