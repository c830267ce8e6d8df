// The registry of compiled kernel instances: one entry per generated .cu, written by
// scripts/gen_dispatch.py into the build tree. The procedural name is each kernel's identity.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/decode_params.cuh"

namespace mha {

// Every compile-time choice of one instance, as plain values (strings as they appear in names).
struct KernelTraits {
  std::string dtype;      // "bf16" | "fp16": q (and K, V unless kv_dtype says otherwise)
  std::string out_dtype;  // "bf16" | "fp16" | "fp32"
  std::string kv_dtype;   // the K/V cache: dtype, or "e4m3" | "e5m2" (fp8 with scales)
  int depth = 0;
  int group = 0;     // query heads per KV head
  std::string kv;    // "contig" | "paged" | "paged_hnd"
  std::string mask;  // "null" | "causal" | "window" | "chunked" | "tree"
  bool has_sink = false;
  bool soft_cap = false;  // cap * tanh(score / cap), the cap given at run time
  int bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, threads = 0, stages = 0;
  bool warp_split_k = false;
  int smem_bytes = 0;        // dynamic shared memory of the decode kernel
  bool multi_token = false;  // several query tokens per sequence (ProblemShape::q_len)
};

// The dtype the kernel's cache holds (traits written before fp8 caches leave kv_dtype empty).
inline const std::string& cache_dtype(const KernelTraits& t) {
  return t.kv_dtype.empty() ? t.dtype : t.kv_dtype;
}

// Row blocks one KV head launches: its group x q_len query rows in blocks of BM (the device side's
// blocks_per_kv_head, decode_traits.cuh).
inline int row_blocks_per_kv_head(const KernelTraits& t, int q_len) {
  return (t.group * q_len + t.bm - 1) / (t.bm > 0 ? t.bm : 1);
}

// The dtype part of a family as select's buckets and the generated defaults key it: q's dtype,
// then "_kv<cache dtype>" for an fp8 cache, "_cap" for soft-capping and "_mt" for several query
// tokens ("bf16", "bf16_kve4m3", "bf16_mt"): single- and multi-token kernels never share a bucket.
inline std::string dtype_key(const std::string& dtype, const std::string& kv_dtype, bool soft_cap,
                             bool multi_token = false) {
  std::string key = dtype;
  if (!kv_dtype.empty() && kv_dtype != dtype) key += "_kv" + kv_dtype;
  if (soft_cap) key += "_cap";
  if (multi_token) key += "_mt";
  return key;
}

// Launches one decode step (decode kernel, plus the split-K reduce when partitions > 1) on a
// stream. Returns the launch error, if any; never synchronises.
using LaunchFn = cudaError_t (*)(const DecodeParams&, cudaStream_t);

struct KernelEntry {
  std::string name;
  KernelTraits traits;
  LaunchFn launch = nullptr;
};

// All instances compiled into this binary, in generator order.
const std::vector<KernelEntry>& kernel_registry();
// The config the instances were generated from, as the generator names it
// ("configs/tiles/ci.json").
const char* built_config_label();
// The generator's config schema as JSON data (keys, choices, tile axes): config_schema.cpp
// validates `sweep --config` files by it, so the tool and the generator share one definition.
const char* config_schema_json();

}  // namespace mha
