// Division by a runtime constant as a multiply-high and a shift (Granlund and Montgomery, 1994):
// the paged K/V address of every 16-byte copy divides a key index by the page size, and an
// integer division there costs about 20 instructions per copy (docs/performance.md).
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

namespace mha {

struct FastDivisor {
  unsigned divisor = 1;
  unsigned mul = 1;  // with shift: n / divisor == (umulhi(n, mul) + n) >> shift, n < 2^31
  int shift = 0;
};

__host__ __device__ inline FastDivisor make_fast_divisor(int divisor) {
  FastDivisor f;
  f.divisor = static_cast<unsigned>(divisor);
  while ((1ull << f.shift) < f.divisor) ++f.shift;  // ceil(log2(divisor))
  f.mul = static_cast<unsigned>(((1ull << 32) * ((1ull << f.shift) - f.divisor)) / f.divisor + 1);
  return f;
}

__host__ __device__ inline unsigned fast_div(unsigned n, const FastDivisor& f) {
#ifdef __CUDA_ARCH__
  const unsigned hi = __umulhi(n, f.mul);
#else
  const unsigned hi = static_cast<unsigned>((static_cast<unsigned long long>(n) * f.mul) >> 32);
#endif
  return (hi + n) >> f.shift;
}

}  // namespace mha
