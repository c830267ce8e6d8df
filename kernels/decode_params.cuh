// Runtime arguments of one decode step, shared by every kernel instance, the split-K reduce and
// the fp32 reference. Plain data so the host can fill it without including device code.
#pragma once

#include "kernels/fast_divisor.cuh"

namespace mha {

// A balanced split plan (src/api/split_plan.h builds it) gives each block one work item: key tiles
// [tile_begin, tile_end) of sequence `seq` (seq_len keys), which is chunk `chunk` of its `chunks`;
// its partials start at row first_partial * heads. Everything a block needs is in the item (two
// 16-byte loads, no dependent lookups before the pipeline starts).
struct alignas(16) WorkItem {
  int seq, tile_begin, tile_end, chunk;
  int chunks, seq_len, first_partial, unused = 0;
};
// Where the chunks of one sequence write their partials: for query row r (query_row below) and
// chunk c, partial row first_partial * heads * q_len + r * chunks + c. A sequence of one chunk
// writes its output directly and the reduce skips it.
struct SeqSplit {
  int first_partial, chunks;
};

// Layouts (row-major, innermost last):
//   q, out:        [batch][q_len][heads][depth]; token t of q_len is at position n - q_len + t
//   contiguous KV: [batch][max_keys][kv_heads][depth], sequence b holds seq_lens[b] keys
//   paged KV:      [num_pages][page_size][kv_heads][depth] (paged_hnd: [num_pages][kv_heads]
//                  [page_size][depth]), key j of sequence b lives in page
//                  page_table[b * max_pages_per_seq + j / page_size] at slot j % page_size
//   partials:      partial_out [partial row][depth] (normalised by its own sum), partial_max /
//                  partial_sum [partial row]; the max is in log2 units (score * log2 e) on both
//                  the writing and the reducing side. Each (sequence, query row r) owns
//                  `chunks` consecutive rows: with fixed partitions row
//                  (b * heads * q_len + r) * partitions + c, with a plan as SeqSplit says.
//   lse:           [batch][q_len][heads]
//   tree_mask:     [batch][q_len] 32-bit words (tree-mask kernels only)
// A ragged step (cu_seqlens_q) packs the tokens instead: [total tokens][heads][depth] for q and
// out, [total tokens][heads] for lse, [total tokens] for tree_mask, sequence b's at rows
// cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1; its partials keep the uniform layout of q_len, the
// most tokens any sequence has, whose rows past a sequence's own tokens stay unused.
// A sequence's query rows are its heads x q_len (token, head) pairs, numbered KV head first, then
// token, then the head within the group: r = (kv_head * q_len + t) * group + g. So the rows of one
// KV head are consecutive, and a block of them reads that head's K/V once for all its tokens.
// Query tokens a step may carry per sequence (DecodeParams::q_len), as problems, reports and the
// library check it: speculative verify steps check a few drafts (2..8 in practice).
constexpr int kMaxQueryTokens = 16;
// Partitions a cluster combine takes (DecodeParams::cluster_combine): the portable cluster size.
constexpr int kMaxClusterPartitions = 8;

// Whether `partitions` fixed partitions, asked to, combine in a thread-block cluster (no partials,
// no reduce launch); other counts fall back to the reduce. Plans never do (launch_decode).
__host__ __device__ inline bool cluster_combines(bool asked, int partitions) {
  return asked && partitions >= 2 && partitions <= kMaxClusterPartitions;
}

struct DecodeParams {
  const void* q = nullptr;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  const int* page_table = nullptr;
  const int* seq_lens = nullptr;
  const float* sink_logits = nullptr;  // [heads], in score units; read only by sink kernels
  // fp8 caches: stored value x dequantises to x * k_scale[kv head] (V: v_scale); per-tensor
  // scales repeat one value. Read only by fp8 kernels.
  const float* k_scale = nullptr;  // [kv_heads]
  const float* v_scale = nullptr;  // [kv_heads]
  void* out = nullptr;
  float* partial_out = nullptr;
  float* partial_max = nullptr;
  float* partial_sum = nullptr;
  // With partitions > 1: one zeroed counter per (sequence, block row) fuses the reduce into the
  // decode kernel (left at zero after each step); null launches the separate reduce pass.
  unsigned* split_counters = nullptr;  // [batch][heads * q_len] (enough for any BM)
  // With partitions > 1 and no split counters: launch the separate reduce with programmatic
  // dependent launch, so its launch overlaps the decode kernel's tail.
  bool programmatic_reduce = false;
  // Ask for the cluster combine: with 2..8 fixed partitions the launcher makes each row block's
  // partitions a thread-block cluster that combines them through distributed shared memory
  // (cluster_combine.cuh), with no partials and no second launch; otherwise (a plan, P = 1 or
  // P > 8) it runs the programmatic reduce. The kernel sees it set only in a cluster launch.
  bool cluster_combine = false;
  // A balanced split plan, in fixed-size device buffers so one captured graph replays for any
  // lengths the capacity holds. Null `work`: every sequence splits into `partitions` equal parts.
  // With a plan the grid is (KV heads x row blocks, work_capacity); items at or past *work_count
  // exit at once.
  const WorkItem* work = nullptr;        // [work_capacity], longest items first
  const int* work_count = nullptr;       // device scalar
  const SeqSplit* seq_splits = nullptr;  // [batch]
  int work_capacity = 0;

  int batch = 0;
  int heads = 0;
  int kv_heads = 0;
  int max_keys = 0;          // contiguous: keys per sequence slot; paged: unused
  int page_size = 0;         // set with set_page_size(), which also fills page_divisor
  FastDivisor page_divisor;  // key / page_size without an integer division (paged only)
  int max_pages_per_seq = 0;
  int partitions = 1;
  int window = 0;  // sliding-window mask: keys p - window < j <= p are visible
  int chunk = 0;   // chunked mask: keys in the query's chunk of this size are visible
  float scale = 0.f;
  float soft_cap = 0.f;  // soft-capping kernels: scores become soft_cap * tanh(score / soft_cap)
  // Element strides of views into an engine's own tensors; 0 keeps the packed layout above (the
  // launcher fills those in: the kernels read every stride as given). A
  // head's depth elements are always contiguous. q and out: between sequences and between heads.
  // The cache (K and V alike): between sequences (contiguous) or pages (paged), between keys (a
  // sequence's, or a page's rows), between KV heads. vLLM's (pages, 2, page_size, kv_heads, depth)
  // cache is a K and a V view with kv_seq_stride twice a page's elements, no copy.
  long long q_seq_stride = 0, out_seq_stride = 0, kv_seq_stride = 0;
  int q_head_stride = 0, out_head_stride = 0, kv_key_stride = 0, kv_head_stride = 0;
  // Optional [batch][q_len][heads] output: each row's log-sum-exp, ln sum_j exp(score_j) over its
  // visible keys (scores scaled and capped, the sink counted; -inf for no visible key), as cascade
  // and context-parallel merges combine partial attentions. Null: not written. The fused reduce
  // (the sweep's --reduce fused) never writes it: its combine stays as small as it is for the key
  // loop's registers (splitk_reduce.cuh), and the library runs the separate one.
  float* lse = nullptr;
  // Phase stamps (phase_clock.cuh), read only by builds with MHA_PHASE_CLOCK: the decode grid's
  // blocks in launch order ([phase_decode_blocks][phase::kDecodeStamps]) and the reduce's
  // ([heads x batch][phase::kReduceStamps]). Null: no stamps.
  unsigned long long* phase_decode = nullptr;
  unsigned long long* phase_reduce = nullptr;
  long long phase_decode_blocks = 0;
  // Query tokens per sequence (speculative verify steps: 2..8 drafts): token t sits at position
  // n - q_len + t and its mask is taken there (masks.cuh). Single-token instances take 1 only.
  int q_len = 1;
  // Between a sequence's tokens, in q and out; 0 keeps the packed layout (fill_row_strides).
  long long q_token_stride = 0, out_token_stride = 0;
  // Tree-mask kernels: [batch][q_len] words, bit j of token t's set where t attends to draft j
  // (masks.cuh tree_sees). Read only by them.
  const unsigned* tree_mask = nullptr;
  // Ragged steps: [batch + 1] offsets of each sequence's first token among the step's
  // (FlashAttention's cu_seqlens_q, FlashInfer's qo_indptr; the first is 0). Sequence b has the
  // difference of entries b + 1 and b, m tokens of 0 to q_len (q_len is then the most any has),
  // token t at position n - m + t. Null: q_len tokens each. Multi-token instances only.
  const int* cu_seqlens_q = nullptr;
};

// The decode grid of one step: (partitions, KV heads x row blocks, batch), or with a plan (KV heads
// x row blocks, work capacity, 1), the KV heads along x so that blocks launch item by item. The
// launcher sizes its grid with it and the phase stamps their buffers.
struct DecodeGrid {
  int x = 1, y = 1, z = 1;
  long long blocks() const { return static_cast<long long>(x) * y * z; }
};
inline DecodeGrid decode_grid(const DecodeParams& p, int blocks_per_kv_head) {
  const int row_blocks = p.kv_heads * blocks_per_kv_head;
  return p.work != nullptr ? DecodeGrid{row_blocks, p.work_capacity, 1}
                           : DecodeGrid{p.partitions, row_blocks, p.batch};
}

// One query row of a sequence: its token (0 .. q_len - 1) and head.
struct QueryRow {
  int token, head;
};
// Query tokens per sequence as an instance sees them: a single-token one (the launcher checks
// q_len is 1) holds the constant 1, so its row arithmetic folds to the one-token layout.
template <bool kMultiToken>
__host__ __device__ inline int query_tokens(const DecodeParams& p) {
  return kMultiToken ? p.q_len : 1;
}

// Sequence b's query tokens: the step-wide index of its first (its row in the token-major layouts)
// and how many it has. Single-token instances fold it to (b, 1), uniform steps to (b * q_len,
// q_len); a ragged step reads its offsets.
struct SeqTokens {
  int first, count;
};
template <bool kMultiToken>
__host__ __device__ inline SeqTokens sequence_tokens(const DecodeParams& p, int b) {
  if constexpr (!kMultiToken) return {b, 1};
  if (p.cu_seqlens_q == nullptr) return {b * p.q_len, p.q_len};
  const int first = p.cu_seqlens_q[b];
  return {first, p.cu_seqlens_q[b + 1] - first};
}

// Sequence-local query row r (numbered KV head first, then token, then head in the group).
template <bool kMultiToken>
__host__ __device__ inline QueryRow query_row(const DecodeParams& p, int r) {
  if constexpr (!kMultiToken) return {0, r};
  const int group = p.heads / p.kv_heads, per_kv_head = group * p.q_len;
  const int kv_head = r / per_kv_head, local = r % per_kv_head;
  return {local / group, kv_head * group + local % group};
}

// Element offsets of (sequence b, query row)'s q and output rows (strides filled:
// fill_row_strides). A ragged step's sequences start at their first token's row, not at a
// sequence stride.
template <bool kMultiToken>
__host__ __device__ inline long long q_row_offset(const DecodeParams& p, int b, QueryRow row) {
  const long long seq = kMultiToken && p.cu_seqlens_q != nullptr
                            ? p.cu_seqlens_q[b] * p.q_token_stride
                            : b * p.q_seq_stride;
  return seq + row.token * p.q_token_stride + static_cast<long long>(row.head) * p.q_head_stride;
}
template <bool kMultiToken>
__host__ __device__ inline long long out_row_offset(const DecodeParams& p, int b, QueryRow row) {
  const long long seq = kMultiToken && p.cu_seqlens_q != nullptr
                            ? p.cu_seqlens_q[b] * p.out_token_stride
                            : b * p.out_seq_stride;
  return seq + row.token * p.out_token_stride +
         static_cast<long long>(row.head) * p.out_head_stride;
}
// The packed layout's q and out strides where the caller left 0 (launch_decode, before every
// launch; the cache's are the operand's, kv_operand.cuh). Filled on the host, the kernels hold
// them as parameters and select nothing.
inline void fill_row_strides(DecodeParams& p, int depth) {
  if (p.q_head_stride == 0) p.q_head_stride = depth;
  if (p.q_token_stride == 0) p.q_token_stride = static_cast<long long>(p.heads) * p.q_head_stride;
  if (p.q_seq_stride == 0) p.q_seq_stride = p.q_len * p.q_token_stride;
  if (p.out_head_stride == 0) p.out_head_stride = depth;
  if (p.out_token_stride == 0)
    p.out_token_stride = static_cast<long long>(p.heads) * p.out_head_stride;
  if (p.out_seq_stride == 0) p.out_seq_stride = p.q_len * p.out_token_stride;
}

inline void set_page_size(DecodeParams& p, int page_size) {
  p.page_size = page_size;
  p.page_divisor = make_fast_divisor(page_size > 0 ? page_size : 1);
}

}  // namespace mha
