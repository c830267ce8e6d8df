// KV-cache operands: where key j of sequence b, KV head h lives. Contiguous caches are
// [batch][max_keys][kv_heads][depth]; paged caches go through a per-sequence page table.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

#include "decode_params.cuh"

namespace mha {

struct ContiguousKv {
  static constexpr const char* kName = "contig";
  // Element offset of the first depth element of (b, key, kv_head).
  __host__ __device__ static inline long long row_offset(const DecodeParams& p, int b, int key,
                                                         int kv_head, int depth) {
    return ((static_cast<long long>(b) * p.max_keys + key) * p.kv_heads + kv_head) * depth;
  }
};

struct PagedKv {
  static constexpr const char* kName = "paged";
  __host__ __device__ static inline long long row_offset(const DecodeParams& p, int b, int key,
                                                         int kv_head, int depth) {
    const int page = p.page_table[b * p.max_pages_per_seq + key / p.page_size];
    const long long slot = static_cast<long long>(page) * p.page_size + key % p.page_size;
    return (slot * p.kv_heads + kv_head) * depth;
  }
};

}  // namespace mha
