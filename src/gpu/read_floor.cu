// The per-problem floor: rotated buffers of the problem's visible K/V bytes, read by the
// bandwidth probe's streaming kernel, timed by the same loop as a decode step.
#include <cmath>
#include <vector>

#include "common/errors.h"
#include "gpu/bandwidth_probe.h"
#include "gpu/device_buffer.h"
#include "gpu/read_floor.h"
#include "sweep/memory_budget.h"

namespace mha {

TimingStats time_read_floor(double kv_bytes, int copies, const TimingOptions& options,
                            cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(std::ceil(kv_bytes / 16.0)) * 16;  // whole uint4s
  std::vector<DeviceBuffer> buffers;
  for (int i = 0; i < copies; ++i) {
    buffers.emplace_back(bytes);
    // Not zeros (a read of zeros can be cheaper on some parts), and the same pattern everywhere.
    MHA_CUDA_CHECK(cudaMemsetAsync(buffers.back().get(), 0x5a, bytes, stream));
  }
  DeviceBuffer sink(sizeof(unsigned));
  int device = 0, sms = 0;
  MHA_CUDA_CHECK(cudaGetDevice(&device));
  MHA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int count = options.use_graph ? steps_per_graph(copies) : copies;
  std::vector<StepLaunch> steps;
  for (int i = 0; i < count; ++i) {
    const void* src = buffers[i % copies].get();
    unsigned* out = sink.get<unsigned>();
    steps.push_back(
        [=](cudaStream_t s) { return launch_streaming_read(src, bytes, out, sms * 8, s); });
  }
  return time_launches(steps, options, stream, "the floor's streaming read");
}

double problem_floor_us(const Problem& problem, int copies, const TimingOptions& options,
                        cudaStream_t stream) {
  const double kv_bytes = visible_kv_bytes(problem);
  if (kv_bytes <= 0 || kv_bytes * copies + kDeviceReserveBytes > free_device_bytes()) return 0;
  try {
    return time_read_floor(kv_bytes, copies, options, stream).median_us;
  } catch (const CudaError& e) {
    if (e.is_sticky()) throw;
    cudaGetLastError();
    return 0;
  }
}

}  // namespace mha
