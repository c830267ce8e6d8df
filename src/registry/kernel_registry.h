// The registry of compiled kernel instances: one entry per generated .cu, written by
// scripts/gen_dispatch.py into the build tree. The procedural name is each kernel's identity.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "decode_params.cuh"

namespace mha {

// Every compile-time choice of one instance, as plain values (strings as they appear in names).
struct KernelTraits {
  std::string dtype;      // "bf16" | "fp16": q, K, V
  std::string out_dtype;  // "bf16" | "fp16" | "fp32"
  int depth = 0;
  int group = 0;          // query heads per KV head
  std::string kv;         // "contig" | "paged"
  std::string mask;       // "null" | "causal" | "window" | "chunked"
  bool has_sink = false;
  int bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, threads = 0, stages = 0;
  bool warp_split_k = false;
  int smem_bytes = 0;     // dynamic shared memory of the decode kernel
};

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
// The config the instances were generated from, as the generator names it ("configs/ci.json").
const char* built_config_label();
// The generator's config schema as JSON data (keys, choices, tile axes): config_schema.cpp
// validates `sweep --config` files by it, so the tool and the generator share one definition.
const char* config_schema_json();

}  // namespace mha
