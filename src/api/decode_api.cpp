// The library entry points of decode_api.h, over the registry of compiled instances. Host code
// only: mha::decode links to mha::kernels and CUDA's runtime, nothing of the CLI.
#include "decode_api.h"

namespace mha {

const KernelEntry* find_kernel(const std::string& name) {
  for (const KernelEntry& k : kernel_registry()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

size_t decode_workspace_bytes(int batch, int heads, int depth, int partitions) {
  if (batch <= 0 || heads <= 0 || depth <= 0 || partitions <= 1) return 0;
  const size_t rows = size_t(batch) * size_t(heads) * size_t(partitions);
  return rows * (size_t(depth) + 2) * sizeof(float);  // partial_out, partial_max, partial_sum
}

void attach_decode_workspace(DecodeParams& p, int depth, void* workspace) {
  if (p.partitions <= 1 || workspace == nullptr) {
    p.partial_out = p.partial_max = p.partial_sum = nullptr;
    return;
  }
  const size_t rows = size_t(p.batch) * size_t(p.heads) * size_t(p.partitions);
  p.partial_out = static_cast<float*>(workspace);
  p.partial_max = p.partial_out + rows * size_t(depth);
  p.partial_sum = p.partial_max + rows;
}

cudaError_t decode(const DecodeParams& p, const std::string& kernel_name, cudaStream_t stream) {
  const KernelEntry* k = find_kernel(kernel_name);
  if (k == nullptr || k->launch == nullptr) return cudaErrorInvalidValue;
  if (p.partitions > 1 &&
      (p.partial_out == nullptr || p.partial_max == nullptr || p.partial_sum == nullptr)) {
    return cudaErrorInvalidValue;
  }
  return k->launch(p, stream);
}

}  // namespace mha
