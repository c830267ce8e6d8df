// Timing one decode step with CUDA events: warm-up, then samples until the stopping rule says
// the median is known. Graph mode captures several steps over rotating input copies into one
// CUDA graph (no launch gaps, as inference engines run decode); stream mode launches plainly.
#pragma once

#include <cuda_runtime.h>

#include "kernel_registry.h"
#include "point_runner.h"
#include "problem_data.h"
#include "stats.h"

namespace mha {

struct TimingOptions {
  bool use_graph = true;
  StoppingCriteria stop;
  double warmup_s = 0.02;
};

// Statistics per decode step, in microseconds. Launch errors throw CudaError (the point was
// verified with the same launch just before).
TimingStats time_step(const KernelEntry& kernel, const ProblemData& data, int partitions,
                       const StepBuffers& buffers, const TimingOptions& options, cudaStream_t stream);

// How many input copies make the working set exceed the L2 several times (1 when one copy does).
int rotation_copies(double bytes_per_copy, int l2_bytes, double max_total_bytes = 16e9);

}  // namespace mha
