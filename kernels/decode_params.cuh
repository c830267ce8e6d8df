// Runtime arguments of one decode step, shared by every kernel instance, the split-K reduce and
// the fp32 reference. Plain data so the host can fill it without including device code.
#pragma once

#include "fast_divisor.cuh"

namespace mha {

// Layouts (row-major, innermost last):
//   q, out:        [batch][heads][depth]
//   contiguous KV: [batch][max_keys][kv_heads][depth], sequence b holds seq_lens[b] keys
//   paged KV:      [num_pages][page_size][kv_heads][depth], key j of sequence b lives in page
//                  page_table[b * max_pages_per_seq + j / page_size] at slot j % page_size
//   partials:      partial_out [batch][heads][partitions][depth] (normalised by its own sum),
//                  partial_max / partial_sum [batch][heads][partitions]; the max is in log2
//                  units (score * log2 e) on both the writing and the reducing side.
struct DecodeParams {
  const void* q = nullptr;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  const int* page_table = nullptr;
  const int* seq_lens = nullptr;
  const float* sink_logits = nullptr;  // [heads], in score units; read only by sink kernels
  void* out = nullptr;
  float* partial_out = nullptr;
  float* partial_max = nullptr;
  float* partial_sum = nullptr;
  // With partitions > 1: one zeroed counter per (sequence, block row) fuses the reduce into the
  // decode kernel (left at zero after each step); null launches the separate reduce pass.
  unsigned* split_counters = nullptr;  // [batch][heads] (enough for any BM)
  // With partitions > 1 and no split counters: launch the separate reduce with programmatic
  // dependent launch, so its launch overlaps the decode kernel's tail.
  bool programmatic_reduce = false;

  int batch = 0;
  int heads = 0;
  int kv_heads = 0;
  int max_keys = 0;  // contiguous: keys per sequence slot; paged: unused
  int page_size = 0;            // set with set_page_size(), which also fills page_divisor
  FastDivisor page_divisor;     // key / page_size without an integer division (paged only)
  int max_pages_per_seq = 0;
  int partitions = 1;
  int window = 0;  // sliding-window mask: keys p - window < j <= p are visible
  int chunk = 0;   // chunked mask: keys in the query's chunk of this size are visible
  float scale = 0.f;
};

inline void set_page_size(DecodeParams& p, int page_size) {
  p.page_size = page_size;
  p.page_divisor = make_fast_divisor(page_size > 0 ? page_size : 1);
}

}  // namespace mha
