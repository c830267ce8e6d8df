// One decode step with phase stamps (kernels/phase_clock.cuh): the decode and reduce grids'
// stamps, downloaded for summarise_phases (src/reports/phase_timeline.h). Needs a build with
// MHA_PHASE_CLOCK; phase_stamps_compiled_in() says whether this one is.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "gpu/phase_stamps.h"
#include "gpu/point_runner.h"
#include "gpu/problem_data.h"
#include "registry/kernel_registry.h"

namespace mha {

bool phase_stamps_compiled_in();

struct PhaseStamps {
  std::vector<DecodeBlockStamps> decode;
  std::vector<ReduceBlockStamps> reduce;
};

// Runs one step of `kernel` on input copy `copy` with `buffers` (attached as for timing) and
// returns every block's stamps. Launch errors throw CudaError (the point was verified first).
PhaseStamps run_stamped_step(const KernelEntry& kernel, const ProblemData& data, int copy,
                             int partitions, const StepBuffers& buffers, cudaStream_t stream);

}  // namespace mha
