// A deliberately simple fp32 attention reference on the GPU for problems too large for the CPU
// reference: one block per (query head, sequence), natural-log softmax, mask tested key by key
// with the contract's own definition. It shares no code path with the decode kernel.
// Several query tokens: one block per (query head, sequence x token), grid (heads, batch x q_len);
// q, out and lse in their packed [batch][q_len][heads] layouts, or a ragged step's
// [total tokens][heads] (cu_seqlens_q), where a sequence's blocks past its own tokens return.
#pragma once

#include <math.h>

#include "kernels/decode_params.cuh"
#include "kernels/masks.cuh"
#include "kernels/ptx.cuh"

namespace mha {

constexpr int kReferenceThreads = 256;

__device__ inline float block_reduce(float v, bool is_max, float* scratch) {
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = is_max ? -INFINITY : 0.f;
  for (int w = 0; w < kReferenceThreads / 32; ++w)
    r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
  __syncthreads();
  return r;
}

// scores: scratch of [batch][q_len][heads][max_len] floats. Keys are read through the logical
// layout [batch][max_len][kv_heads][depth] (the generator keeps a logical copy of paged caches); an
// fp8 cache is dequantised with p.k_scale / p.v_scale [kv head] (null: 16-bit, no scale).
// p.soft_cap > 0 caps each score as soft_cap * tanh(score / soft_cap).
template <typename QElem, typename KvElem, typename Out>
__global__ void __launch_bounds__(kReferenceThreads)
    reference_attention_kernel(const DecodeParams p, const KvElem* k_logical,
                               const KvElem* v_logical, int max_len, int depth, int group,
                               MaskKind mask, bool has_sink, float* scores) {
  __shared__ float scratch[kReferenceThreads / 32];
  const int head = blockIdx.x, b = blockIdx.y / p.q_len, token = blockIdx.y % p.q_len;
  const SeqTokens seq = sequence_tokens<true>(p, b);
  if (token >= seq.count) return;  // a ragged step's sequence of fewer tokens
  const int kv_head = head / group;
  const int n = p.seq_lens[b];
  // [token][head] over the step's tokens (packed, ragged or not); the scores' scratch by grid row.
  const long long row = (static_cast<long long>(seq.first) + token) * p.heads + head;
  const QElem* q = static_cast<const QElem*>(p.q) + row * depth;
  const float k_dequant = p.k_scale != nullptr ? p.k_scale[kv_head] : 1.f;
  const float v_dequant = p.v_scale != nullptr ? p.v_scale[kv_head] : 1.f;
  float* s = scores + (static_cast<long long>(blockIdx.y) * p.heads + head) * max_len;
  auto kv_row = [&](const KvElem* base, int key) {
    return base + ((static_cast<long long>(b) * max_len + key) * p.kv_heads + kv_head) * depth;
  };
  const TreeWord tree = mask == MaskKind::kTree ? p.tree_mask[seq.first + token] : 0u;
  float m = has_sink ? p.sink_logits[head] : -INFINITY;
  for (int j = threadIdx.x; j < n; j += kReferenceThreads) {
    float dot = 0.f;
    const KvElem* k = kv_row(k_logical, j);
    for (int c = 0; c < depth; ++c) dot += ptx::to_float(q[c]) * (ptx::to_float(k[c]) * k_dequant);
    float score = dot * p.scale;
    if (p.soft_cap > 0.f) score = p.soft_cap * tanhf(score / p.soft_cap);
    s[j] = key_visible(mask, j, n, p.window, p.chunk, seq.count, token, tree) ? score : -INFINITY;
    m = fmaxf(m, s[j]);
  }
  m = block_reduce(m, true, scratch);
  const float base = m == -INFINITY ? 0.f : m;
  float sum = 0.f;
  for (int j = threadIdx.x; j < n; j += kReferenceThreads) sum += expf(s[j] - base);
  sum = block_reduce(sum, false, scratch);
  if (has_sink) sum += expf(p.sink_logits[head] - base);
  if (threadIdx.x == 0 && p.lse != nullptr) p.lse[row] = sum > 0.f ? base + logf(sum) : -INFINITY;
  __syncthreads();
  for (int c = threadIdx.x; c < depth; c += kReferenceThreads) {
    float acc = 0.f;
    for (int j = 0; j < n; ++j)
      acc += expf(s[j] - base) * (ptx::to_float(kv_row(v_logical, j)[c]) * v_dequant);
    const float o = sum > 0.f ? acc / sum : 0.f;
    static_cast<Out*>(p.out)[row * depth + c] = ptx::from_float<Out>(o);
  }
}

}  // namespace mha
