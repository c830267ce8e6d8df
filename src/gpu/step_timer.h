// Timing one decode step with CUDA events: warm-up, then samples until the stopping rule says
// the median is known. Graph mode captures several steps over rotating input copies into one
// CUDA graph (no launch gaps, as inference engines run decode); stream mode launches plainly.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "common/stats.h"
#include "gpu/point_runner.h"
#include "gpu/problem_data.h"
#include "registry/kernel_registry.h"

namespace mha {

struct TimingOptions {
  bool use_graph = true;
  StoppingCriteria stop;
  double warmup_s = 0.02;
};

// One step as a launch on a stream (captured into the graph in graph mode).
using StepLaunch = std::function<cudaError_t(cudaStream_t)>;

// Statistics per step of `steps` (graph mode: all of them captured into one graph, a sample is one
// replay; stream mode: one step per sample, cycling). `what` names the launches in errors.
TimingStats time_launches(const std::vector<StepLaunch>& steps, const TimingOptions& options,
                          cudaStream_t stream, const std::string& what);

// Steps captured per graph over `copies` input copies: each copy once, and at least 8.
int steps_per_graph(int copies);

// Statistics per decode step, in microseconds. Launch errors throw CudaError (the point was
// verified with the same launch just before).
TimingStats time_step(const KernelEntry& kernel, const ProblemData& data, int partitions,
                      const StepBuffers& buffers, const TimingOptions& options,
                      cudaStream_t stream);

}  // namespace mha
