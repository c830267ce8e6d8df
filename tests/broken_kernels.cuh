// Deliberately broken decode kernels (kernels/fault_injection.cuh's Fault, injected with
// WithFault), each next to the same production instance: what verification must reject, and its
// control.
#pragma once

#include "kernels/decode_launch.cuh"
#include "kernels/fault_injection.cuh"
#include "registry/kernel_registry.h"

namespace mha::testing {

template <bool kSink>
using ControlTraits = DecodeTraits<
    DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 4, ContiguousKv, NullMask, kSink>,
    TileShape<16, 64, 32, 16, 16, 128, 3, false>>;
template <Fault kFault, bool kSink>
using BrokenTraits = WithFault<ControlTraits<kSink>, kFault>;

inline KernelTraits broken_traits(bool sink) {
  KernelTraits t;
  t.dtype = "bf16";
  t.out_dtype = "bf16";
  t.depth = 128;
  t.group = 4;
  t.kv = "contig";
  t.mask = "null";
  t.has_sink = sink;
  t.bm = 16;
  t.bn = 64;
  t.bk = 32;
  t.wm = 16;
  t.wn = 16;
  t.threads = 128;
  t.stages = 3;
  t.warp_split_k = false;
  t.smem_bytes = ControlTraits<false>::kSmemBytes;
  return t;
}

// The faulty instances under names that say what is wrong with them.
inline std::vector<KernelEntry> broken_kernels() {
  return {
      {"broken_reduce_natural_exp_bf16_d128_g4", broken_traits(false),
       &launch_decode<BrokenTraits<Fault::kReduceNaturalExp, false>>},
      {"broken_drop_last_tile_bf16_d128_g4", broken_traits(false),
       &launch_decode<BrokenTraits<Fault::kDropLastTile, false>>},
      {"broken_sink_per_partition_bf16_d128_g4_sink", broken_traits(true),
       &launch_decode<BrokenTraits<Fault::kSinkPerPartition, true>>},
  };
}

inline std::vector<KernelEntry> control_kernels() {
  return {
      {"control_bf16_d128_g4", broken_traits(false), &launch_decode<ControlTraits<false>>},
      {"control_bf16_d128_g4_sink", broken_traits(true), &launch_decode<ControlTraits<true>>},
  };
}

}  // namespace mha::testing
