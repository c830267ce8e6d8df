// A problem's floor: the time a plain streaming read of exactly its visible K/V bytes takes when
// launched like a decode step (graph replay over rotated copies, the same stopping rule). For
// short steps this, not bytes / peak bandwidth, is the honest limit: a 2 MB read already costs
// about 3 us in a graph on the H200 (shared/GPU.md).
#pragma once

#include <cuda_runtime.h>

#include "common/stats.h"
#include "gpu/step_timer.h"
#include "problems/problem.h"

namespace mha {

// Median microseconds of one read of `kv_bytes`, rotating over `copies` buffers of that size
// (as the step rotates its input copies). Throws CudaError on a CUDA failure, including an
// allocation the free memory cannot hold.
TimingStats time_read_floor(double kv_bytes, int copies, const TimingOptions& options,
                            cudaStream_t stream);

// A problem's floor in microseconds, once per problem and run: its visible K/V bytes over its
// `copies` rotated copies. 0 (not measured) when the buffers do not fit beside what is already
// allocated, or when the read fails without breaking the context; a sticky error throws.
double problem_floor_us(const Problem& problem, int copies, const TimingOptions& options,
                        cudaStream_t stream);

}  // namespace mha
