// Synthetic inputs of one problem on the GPU: q, K, V (contiguous or paged with shuffled pages),
// lengths, sink logits and draft trees, generated from a seed (normal values, never zeros), in one
// or more copies so that timing can rotate through more bytes than the L2 holds.
#pragma once

#include <cstdint>
#include <vector>

#include "common/kinds.h"
#include "gpu/device_buffer.h"
#include "kernels/decode_params.cuh"
#include "kernels/masks.cuh"
#include "problems/problem.h"

namespace mha {

// Host copies of copy 0 in logical layout, as floats (for the CPU reference and --dump); fp8
// caches dequantised (the values the cache stands for).
struct HostInputs {
  std::vector<float> q;              // [tokens][heads][depth], token-major (query_token_starts)
  std::vector<float> k, v;           // [batch][max_len][kv_heads][depth]
  std::vector<float> sink_logits;    // [heads] (empty without sink)
  std::vector<TreeWord> tree_words;  // [tokens] (tree mask only; draft_tree.h)
  std::vector<int> lengths;
  int max_len = 0;
};

// How an fp8 cache is made: K of KV head h holds N(0, k_sigma[h]^2) values stored as
// fp8(x / k_scale[h]), V likewise with v_sigma and v_scale (V's spread is kVSigmaFactor times
// K's, so a kernel that swapped the two scales fails verification); per-tensor scales repeat one
// value. Empty for 16-bit caches (N(0, 1), no scales).
constexpr float kVSigmaFactor = 3.f;
struct KvQuantisation {
  std::vector<float> k_sigma, v_sigma, k_scale, v_scale;  // [kv_heads]
};
KvQuantisation kv_quantisation(const ProblemShape& shape);

class ProblemData {
 public:
  // Key slots past a sequence's length (and unused page slots) hold NaN: a kernel that reads
  // them fails verification instead of passing by luck.
  ProblemData(const Problem& problem, int copies);

  int copies() const { return static_cast<int>(q_.size()); }
  // Runtime arguments for copy `copy` (outputs and partials left null: the caller sets them).
  DecodeParams params(int copy, int partitions) const;
  // fp8 caches: the dequantisation scales per KV head, on the device; else null.
  const float* k_scale() const { return k_scale_.get<float>(); }
  const float* v_scale() const { return v_scale_.get<float>(); }
  // Logical K/V of copy 0 ([batch][max_len][kv_heads][depth]), for the GPU reference.
  const void* k_logical() const { return is_paged() ? k_logical_.get() : k_[0].get(); }
  const void* v_logical() const { return is_paged() ? v_logical_.get() : v_[0].get(); }
  bool is_paged() const { return mha::is_paged(problem_.shape.kv); }
  HostInputs download() const;

 private:
  Problem problem_;
  size_t q_elems_ = 0, cache_elems_ = 0, logical_elems_ = 0;
  int max_pages_per_seq_ = 0;
  std::vector<DeviceBuffer> q_, k_, v_;
  KvQuantisation quant_;
  std::vector<TreeWord> tree_words_;  // what tree_ holds, for download()
  DeviceBuffer k_logical_, v_logical_, lengths_, page_table_, sink_, k_scale_, v_scale_, tree_;
  DeviceBuffer token_starts_;  // a ragged step's cu_seqlens_q; else empty
};

// Device bytes of one copy of a problem's inputs (q, K, V as laid out), before allocating it.
double copy_bytes(const Problem& problem);

// Fills `bytes` bytes at dst with 0xff: NaN in fp32, bf16, fp16, e4m3 and e5m2 alike.
void poison(void* dst, size_t bytes, cudaStream_t stream = 0);

}  // namespace mha
