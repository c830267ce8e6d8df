// Phase stamps: where a step's time goes inside its kernels. Each decode block's thread 0 records
// when it starts, when its first K/V tile has landed, when its key loop ends and when it exits
// (and, after the loop, when its merge area is written, when its cluster met and when its share of
// the cluster's combine is written); each reduce
// block when it starts, when the decode grid it waits on has finished, and when it exits.
// Compiled in only with MHA_PHASE_CLOCK (CMake -DMHA_PHASE_CLOCK=ON, `mha-tune phases`):
// otherwise every stamp is empty and the kernels are exactly the timed ones.
// Two clocks: %globaltimer (ns, shared by all SMs) places blocks against each other, and the
// SM's cycle counter times the phases inside one block (the host converts cycles with the ratio
// of the two over each block's life, src/gpu/phase_timeline.h).
#pragma once

#include "kernels/decode_params.cuh"

namespace mha::phase {

// One decode block's stamps, in this order (kDecodeStamps 64-bit words a block).
enum DecodeStamp {
  kDecodeStartNs,     // globaltimer at entry
  kDecodeExitNs,      // globaltimer at exit
  kDecodeStartCycle,  // clock64 at entry
  kFirstTileCycle,    // the first K/V tile has landed (0: the block had no tile)
  kLoopEndCycle,      // the key loop is over (a block without tiles stamps it too)
  kMergedCycle,       // the warps' copies are in the merge area, before the partials or the cluster
  kClusterMetCycle,   // a cluster combine: past the cluster's first barrier (0: no cluster)
  kCombinedCycle,     // a cluster combine: its share combined and written, before the last barrier
  kDecodeExitCycle,   // clock64 at exit
  kDecodeSm,          // the SM that ran the block
  kDecodeStamps
};
// One reduce block's stamps.
enum ReduceStamp {
  kReduceStartNs,   // globaltimer at entry
  kReduceWaitedNs,  // after it waited for the decode grid (0: nothing to combine)
  kReduceExitNs,    // globaltimer at exit
  kReduceStamps
};

#if defined(MHA_PHASE_CLOCK)
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ long long linear_block() {
  return blockIdx.x + static_cast<long long>(gridDim.x) *
                          (blockIdx.y + static_cast<long long>(gridDim.y) * blockIdx.z);
}
__device__ __forceinline__ unsigned long long* decode_slot(const DecodeParams& p) {
  const long long b = linear_block();
  return p.phase_decode != nullptr && b < p.phase_decode_blocks && threadIdx.x == 0
             ? p.phase_decode + b * kDecodeStamps
             : nullptr;
}
// The block's stamps wait in shared memory until its exit: a global store before one of the
// cluster combine's release barriers (a MEMBAR.ALL.GPU) made that barrier wait for the store,
// so the stamps lengthened what they measured.
__device__ __forceinline__ unsigned long long* block_stamps() {
  __shared__ unsigned long long stamps[kDecodeStamps];
  return stamps;
}
__device__ __forceinline__ void decode_start(const DecodeParams& p) {
  if (decode_slot(p) != nullptr) {
    unsigned long long* s = block_stamps();
    for (int i = 0; i < kDecodeStamps; ++i) s[i] = 0;  // a stamp never reached stays 0
    s[kDecodeStartNs] = global_ns();
    s[kDecodeStartCycle] = clock64();
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    s[kDecodeSm] = sm;
  }
}
__device__ __forceinline__ void decode_cycle(const DecodeParams& p, DecodeStamp which) {
  if (decode_slot(p) != nullptr) block_stamps()[which] = clock64();
}
__device__ __forceinline__ void decode_exit(const DecodeParams& p) {
  if (unsigned long long* out = decode_slot(p)) {
    unsigned long long* s = block_stamps();
    s[kDecodeExitCycle] = clock64();
    s[kDecodeExitNs] = global_ns();
    for (int i = 0; i < kDecodeStamps; ++i) out[i] = s[i];
  }
}
__device__ __forceinline__ void reduce_stamp(const DecodeParams& p, ReduceStamp which) {
  const long long b = linear_block();
  if (p.phase_reduce != nullptr && threadIdx.x == 0)
    p.phase_reduce[b * kReduceStamps + which] = global_ns();
}
#else
__device__ __forceinline__ void decode_start(const DecodeParams&) {}
__device__ __forceinline__ void decode_cycle(const DecodeParams&, DecodeStamp) {}
__device__ __forceinline__ void decode_exit(const DecodeParams&) {}
__device__ __forceinline__ void reduce_stamp(const DecodeParams&, ReduceStamp) {}
#endif

// Whether this build records stamps (the host asks before it runs `mha-tune phases`).
constexpr bool kCompiledIn =
#if defined(MHA_PHASE_CLOCK)
    true;
#else
    false;
#endif

}  // namespace mha::phase
