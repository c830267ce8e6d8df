// Thin wrappers over the PTX this family uses: 16-byte cp.async with zero fill, ldmatrix and
// the m16n8k16 tensor-core MMA with fp32 accumulation (sm_80 and later).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

namespace mha::ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes global -> shared, bypassing L1; src_bytes 0 writes zeros instead.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src), "r"(src_bytes));
}
// Copies 4 bytes global -> shared (through L1: the 16-byte form alone may bypass it).
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src));
}
// Writes 16 zero bytes to shared memory; an asm statement, so it stays after the cp.async wait
// that lets it overwrite a landed copy.
__device__ __forceinline__ void st_shared_zero_16(void* smem_dst) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(smem_addr(smem_dst)), "r"(0u)
               : "memory");
}
// Programmatic dependent launch (sm_90): the decode kernel lets the reduce launch early; the
// reduce waits for the decode grid's completion and memory before it reads the partials. Both
// are no-ops without the launch attribute, and compile to nothing below sm_90.
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
}
__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// A barrier of `threads` threads (whole warps) on named barrier `id` (1..15; 0 is __syncthreads'),
// with the memory ordering of __syncthreads among them.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}

// x, through a move ptxas cannot see into: the value is computed once, here, and kept in a
// register; without it ptxas may recompute it from blockIdx and the parameters at every use.
__device__ __forceinline__ long long opaque(long long x) {
  long long out;
  asm volatile("mov.b64 %0, %1;\n" : "=l"(out) : "l"(x));
  return out;
}

// The same for 32-bit values.
__device__ __forceinline__ int opaque(int x) {
  int out;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(out) : "r"(x));
  return out;
}
// a · b of two ints as a 64-bit product in one instruction (mul.wide.s32); written as
// (long long)a * b, ptxas multiplied 64 by 64 bits where it could not see that b fits 32.
__device__ __forceinline__ long long mul_wide(int a, int b) {
  long long out;
  asm("mul.wide.s32 %0, %1, %2;\n" : "=l"(out) : "r"(a), "r"(b));
  return out;
}

// Transposes the 8x8 matrix of 16-bit values the warp holds in fragment order (thread lane:
// row lane/4, columns 2·(lane%4) and +1) into the same order of its transpose.
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t fragment) {
  uint32_t out;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(out) : "r"(fragment));
  return out;
}

// The cluster barrier with a relaxed arrive (sm_90): it orders nothing, so it compiles to no
// MEMBAR. A release arrive at cluster scope compiles to MEMBAR.ALL.GPU, which waits for the
// thread's outstanding global stores (SASS). Below sm_90 no launch makes a cluster: a trap.
__device__ __forceinline__ void cluster_sync_relaxed() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}

// Atomic add with acquire-release semantics at gpu scope: releases the writes this thread has
// observed (including, through a preceding barrier, its block's) and acquires other blocks'.
__device__ __forceinline__ unsigned atomic_add_acq_rel_gpu(unsigned* addr, unsigned value) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(addr), "r"(value)
               : "memory");
  return old;
}

template <typename Elem>
struct Mma;

// D(16x8, fp32) += A(16x16, row) * B(16x8, col)
template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
template <>
struct Mma<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// Two floats packed as one 32-bit register of the MMA element type (low half = first).
template <typename Elem>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

template <typename T>
__host__ __device__ __forceinline__ T from_float(float x);
template <>
__host__ __device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__host__ __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__host__ __device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <typename T>
__host__ __device__ __forceinline__ float to_float(T x);
template <>
__host__ __device__ __forceinline__ float to_float<float>(float x) {
  return x;
}
template <>
__host__ __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <>
__host__ __device__ __forceinline__ float to_float<__half>(__half x) {
  return __half2float(x);
}
// fp8 conversions saturate to the largest finite value (NaN stays NaN), as engines quantise.
template <>
__host__ __device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float x) {
  return __nv_fp8_e4m3(x);
}
template <>
__host__ __device__ __forceinline__ __nv_fp8_e5m2 from_float<__nv_fp8_e5m2>(float x) {
  return __nv_fp8_e5m2(x);
}
template <>
__host__ __device__ __forceinline__ float to_float<__nv_fp8_e4m3>(__nv_fp8_e4m3 x) {
  return static_cast<float>(x);
}
template <>
__host__ __device__ __forceinline__ float to_float<__nv_fp8_e5m2>(__nv_fp8_e5m2 x) {
  return static_cast<float>(x);
}

template <typename Fp8>
struct Fp8Kind;
template <>
struct Fp8Kind<__nv_fp8_e4m3> {
  static constexpr __nv_fp8_interpretation_t value = __NV_E4M3;
};
template <>
struct Fp8Kind<__nv_fp8_e5m2> {
  static constexpr __nv_fp8_interpretation_t value = __NV_E5M2;
};

// Two fp8 values (low byte first) as an fp16 pair in one register: exact for every e4m3 and
// e5m2 value, one cvt instruction on sm_89 and later.
template <typename Fp8>
__device__ __forceinline__ uint32_t fp8x2_to_half2(uint16_t pair) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pair, Fp8Kind<Fp8>::value);
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

// The fp8 pair in the low (kHigh false) or high 16 bits of a register as an fp16 pair. The half
// is a selector of the cvt in SASS (R.H1), where fp8x2_to_half2 of x >> 16 costs a shift (32
// of the 345 instructions of a tile in the e4m3 BM-8 key loop, SASS). Below sm_89 (no fp8 cvt):
// the shift and the intrinsic's emulation.
template <typename Fp8, bool kHigh>
__device__ __forceinline__ uint32_t fp8x2_to_half2_of(uint32_t four) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t out;
  if constexpr (std::is_same_v<Fp8, __nv_fp8_e4m3> && !kHigh)
    asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e4m3x2 %0, lo;\n}\n"
        : "=r"(out)
        : "r"(four));
  else if constexpr (std::is_same_v<Fp8, __nv_fp8_e4m3>)
    asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e4m3x2 %0, hi;\n}\n"
        : "=r"(out)
        : "r"(four));
  else if constexpr (!kHigh)
    asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e5m2x2 %0, lo;\n}\n"
        : "=r"(out)
        : "r"(four));
  else
    asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e5m2x2 %0, hi;\n}\n"
        : "=r"(out)
        : "r"(four));
  return out;
#else
  return fp8x2_to_half2<Fp8>(static_cast<uint16_t>(kHigh ? four >> 16 : four & 0xffff));
#endif
}

// A register of two 16-bit values as floats (low half first).
template <typename Elem>
__device__ __forceinline__ float2 unpack2(uint32_t bits);
template <>
__device__ __forceinline__ float2 unpack2<__nv_bfloat16>(uint32_t bits) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits));
}
template <>
__device__ __forceinline__ float2 unpack2<__half>(uint32_t bits) {
  return __half22float2(*reinterpret_cast<const __half2*>(&bits));
}

}  // namespace mha::ptx
