// The library entry points an engine calls: find a compiled kernel instance by its procedural
// name, size the split-K workspace, launch one decode step. Installed with mha::decode.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "kernel_registry.h"

namespace mha {

// The compiled instance with this procedural name, or nullptr when this build lacks it.
const KernelEntry* find_kernel(const std::string& name);

// Bytes of the split-K partials one step needs: partial_out [batch][heads][partitions][depth],
// then partial_max and partial_sum [batch][heads][partitions], all float, back to back (the
// sizes point_runner.cu's StepBuffers allocates). 0 when partitions <= 1: no partials are read.
size_t decode_workspace_bytes(int batch, int heads, int depth, int partitions);

// Points p.partial_out/max/sum into one buffer of decode_workspace_bytes(p.batch, p.heads, depth,
// p.partitions) bytes, in the order above (null pointers when p.partitions <= 1).
void attach_decode_workspace(DecodeParams& p, int depth, void* workspace);

// Launches the named instance on the stream (the decode kernel, plus the split-K reduce when
// p.partitions > 1; never synchronises). cudaErrorInvalidValue with no launch when the name is
// not compiled in, or when p.partitions > 1 and the partials are missing.
cudaError_t decode(const DecodeParams& p, const std::string& kernel_name, cudaStream_t stream);

}  // namespace mha
