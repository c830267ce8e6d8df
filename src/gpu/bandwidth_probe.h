// The GPU's streaming-read bandwidth, measured at the start of a sweep: the roofline every row's
// achieved bandwidth is a fraction of.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace mha {

// One streaming read of `bytes` (a multiple of 16) at `src`: 16-byte loads that bypass L2
// retention, at most `max_blocks` blocks of 512 threads, fewer when there is less to read. The
// probe and each problem's floor (read_floor.h) read with it.
cudaError_t launch_streaming_read(const void* src, size_t bytes, unsigned* sink, int max_blocks,
                                  cudaStream_t stream);

// Median GB/s of `repeats` timed reads of a `bytes` buffer (16-byte loads, every SM busy).
double measure_peak_read_gbps(double bytes = 4.0e9, int repeats = 20);

}  // namespace mha
