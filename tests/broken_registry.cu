// The registry of the `mha-tune-broken` test binary: only deliberately broken kernels, so a test
// can prove that `mha-tune verify` exits 1 and names the kernel and the problem.
#include "tests/broken_kernels.cuh"

namespace mha {

const std::vector<KernelEntry>& kernel_registry() {
  static const std::vector<KernelEntry> entries = testing::broken_kernels();
  return entries;
}

}  // namespace mha
