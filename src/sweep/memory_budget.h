// How many device bytes a problem needs before its data is allocated, and the sentence that says
// it does not fit: a problem larger than the free memory is reported per problem
// (not_supported), not as a raw out-of-memory error from deep inside an allocation.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "problems/problem.h"

namespace mha {

// Graph instantiation and cudaMalloc's 2 MiB rounding of large buffers take memory that no
// buffer size shows; 256 MiB covers a sweep's graphs with room to spare.
constexpr double kDeviceReserveBytes = 256.0 * 1024 * 1024;

struct MemoryNeed {
  int copies = 1;
  double inputs_bytes = 0;     // every rotated copy of q, K, V as laid out, with their staging
  double outputs_bytes = 0;    // output, split-K partials and counters of the largest partitions
  double reference_bytes = 0;  // the fp32 GPU reference's output and scores (0: CPU reference)
  double reserve_bytes = 0;    // CUDA graphs, events and allocation rounding
  double total() const { return inputs_bytes + outputs_bytes + reference_bytes + reserve_bytes; }
};

// How many input copies make the working set exceed the L2 several times (1 when one copy does):
// what the planner estimates with, the budget counts and the runners allocate.
int rotation_copies(double bytes_per_copy, int l2_bytes, double max_total_bytes = 16e9);

// Problems up to this many multiply-adds (batch·heads·keys·depth) use the CPU reference; larger
// ones the GPU one, whose buffers the budget counts (verify/ runs whichever this says).
constexpr double kCpuReferenceMaxMacs = 64.0 * 1024 * 1024;
bool use_cpu_reference(const Problem& problem);

// Peak device bytes of one problem: `copies` input copies (ProblemData), the StepBuffers of its
// largest partition count, and the GPU reference when the problem is too large for the CPU one.
MemoryNeed problem_device_bytes(const Problem& problem, int copies, bool fused_reduce = false);

// The sentence saying that `problem` does not fit into `free_bytes` on GPU `device`, naming what
// it needs and what is free; nullopt when it fits. Pure: callers pass cudaMemGetInfo's free bytes.
std::optional<std::string> memory_shortfall(const Problem& problem, const MemoryNeed& need,
                                            size_t free_bytes, int device);

// Free bytes on the current device (cudaMemGetInfo). Throws CudaError.
size_t free_device_bytes();

}  // namespace mha
