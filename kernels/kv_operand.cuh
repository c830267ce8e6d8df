// KV-cache operands: where key j of sequence b, KV head h lives. Contiguous caches are
// [batch][max_keys][kv_heads][depth]; paged caches go through a per-sequence page table, with
// each page [page_size][kv_heads][depth] (NHD, vLLM's order) or [kv_heads][page_size][depth]
// (HND, FlashInfer's and TensorRT-LLM's: one KV head's rows of a page are contiguous).
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

#include "kernels/decode_params.cuh"

namespace mha {

// Both operands split the address of a key row in two steps so that the kernel can prefetch
// the first: lookup() (a page-table read for paged caches; nothing for contiguous ones) and
// row_offset_from() (arithmetic only). row_offset() is the two together.
struct ContiguousKv {
  static constexpr const char* kName = "contig";
  static constexpr bool kHasLookup = false;
  __host__ __device__ static inline int lookup(const DecodeParams&, int, int) { return 0; }
  __host__ __device__ static inline long long row_offset_from(const DecodeParams& p, int b, int key,
                                                              int kv_head, int depth, int) {
    return row_offset(p, b, key, kv_head, depth);
  }
  // Element offset of the first depth element of (b, key, kv_head).
  __host__ __device__ static inline long long row_offset(const DecodeParams& p, int b, int key,
                                                         int kv_head, int /*depth*/) {
    return b * p.kv_seq_stride + static_cast<long long>(key) * p.kv_key_stride +
           static_cast<long long>(kv_head) * p.kv_head_stride;
  }
  // row_offset is linear in the key: key + 1 is this many elements further.
  __host__ __device__ static inline long long key_stride(const DecodeParams& p, int) {
    return p.kv_key_stride;
  }
  // The packed layout's strides where the caller left 0 (launch_decode, before every launch).
  static inline void fill_strides(DecodeParams& p, int depth) {
    if (p.kv_head_stride == 0) p.kv_head_stride = depth;
    if (p.kv_key_stride == 0) p.kv_key_stride = p.kv_heads * depth;
    if (p.kv_seq_stride == 0)
      p.kv_seq_stride = static_cast<long long>(p.max_keys) * p.kv_key_stride;
  }
};

// A paged cache of either page order: the page-table look-up and the split of a key into its
// page and its row within the page are the same; `Order` places a row within a page (its
// row_stride and head_offset).
template <class Order>
struct PagedKvIn {
  static constexpr const char* kName = Order::kName;
  static constexpr bool kHasLookup = true;
  // key / page_size by multiply-high and shift: paged copies issued two integer divisions each,
  // and paged steps ran 1.2-1.6x the contiguous time (docs/performance.md).
  __host__ __device__ static inline int lookup(const DecodeParams& p, int b, int key) {
    return *table_entry(p, b, key);
  }
  // Where the key's page number sits in the page table.
  __host__ __device__ static inline const int* table_entry(const DecodeParams& p, int b, int key) {
    return p.page_table + b * p.max_pages_per_seq + fast_div(key, p.page_divisor);
  }
  // The key's row within its page.
  __host__ __device__ static inline int in_page(const DecodeParams& p, int key) {
    return key - static_cast<int>(fast_div(key, p.page_divisor)) * p.page_size;
  }
  // The row `in_page` of physical page `page` (the kernel splits the key once, at look-up time):
  // page · page_stride + in_page · row_stride + head_offset. The kernel computes the last term
  // once per thread and the page's product once per row; every stride fits an int (a page's
  // elements), only the page's product needs 64 bits.
  __host__ __device__ static inline long long page_row_offset(const DecodeParams& p, int page,
                                                              int in_page, int kv_head, int depth) {
    return static_cast<long long>(page) * page_stride(p, depth) + in_page * row_stride(p, depth) +
           head_offset(p, kv_head, depth);
  }
  // Every stride fits an int: a page's elements (the library refuses a page of 2^31 bytes or
  // more). The packed layout's where the caller left 0: fill_strides, before every launch.
  __host__ __device__ static inline int page_stride(const DecodeParams& p, int) {
    return static_cast<int>(p.kv_seq_stride);
  }
  __host__ __device__ static inline int row_stride(const DecodeParams& p, int) {
    return p.kv_key_stride;
  }
  __host__ __device__ static inline int head_offset(const DecodeParams& p, int kv_head, int) {
    return kv_head * p.kv_head_stride;
  }
  static inline void fill_strides(DecodeParams& p, int depth) {
    if (p.kv_head_stride == 0) p.kv_head_stride = Order::head_stride(p, depth);
    if (p.kv_key_stride == 0) p.kv_key_stride = Order::row_stride(p, depth);
    if (p.kv_seq_stride == 0)
      p.kv_seq_stride = static_cast<long long>(p.page_size) * p.kv_heads * depth;
  }
  __host__ __device__ static inline long long row_offset_from(const DecodeParams& p, int, int key,
                                                              int kv_head, int depth, int page) {
    return page_row_offset(p, page, in_page(p, key), kv_head, depth);
  }
  __host__ __device__ static inline long long row_offset(const DecodeParams& p, int b, int key,
                                                         int kv_head, int depth) {
    return row_offset_from(p, b, key, kv_head, depth, lookup(p, b, key));
  }
};

// Pages in NHD order (vLLM's): a page is [page_size][kv_heads][depth].
struct NhdPageOrder {
  static constexpr const char* kName = "paged";
  // Within a page: rows kv_heads · depth apart, the head depth further.
  __host__ __device__ static inline int row_stride(const DecodeParams& p, int depth) {
    return p.kv_heads * depth;
  }
  __host__ __device__ static inline int head_stride(const DecodeParams&, int depth) {
    return depth;
  }
};

// Pages in HND order (FlashInfer's, TensorRT-LLM's): a KV head's page_size rows are one
// contiguous block (4 KiB at page 16, d128, 16-bit) instead of page_size rows 2 KiB apart (8 KV
// heads): the same bytes, fewer and larger contiguous pieces per block.
struct HndPageOrder {
  static constexpr const char* kName = "paged_hnd";
  // Within a page: the head's page_size rows back to back, depth apart.
  __host__ __device__ static inline int row_stride(const DecodeParams&, int depth) { return depth; }
  __host__ __device__ static inline int head_stride(const DecodeParams& p, int depth) {
    return p.page_size * depth;
  }
};

using PagedKv = PagedKvIn<NhdPageOrder>;
using PagedHndKv = PagedKvIn<HndPageOrder>;

}  // namespace mha
