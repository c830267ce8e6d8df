// A plain streaming-read kernel timed with events.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/stats.h"
#include "gpu/bandwidth_probe.h"
#include "gpu/device_buffer.h"

namespace mha {
namespace {

__global__ void read_kernel(const uint4* __restrict__ src, size_t count, unsigned* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcs(src + i);  // streaming: do not keep in L2
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // keeps the loads alive; practically never taken
}

constexpr int kReadThreads = 512;

}  // namespace

cudaError_t launch_streaming_read(const void* src, size_t bytes, unsigned* sink, int max_blocks,
                                  cudaStream_t stream) {
  const size_t count = bytes / sizeof(uint4);
  const size_t wanted = (count + kReadThreads - 1) / kReadThreads;
  const int blocks = static_cast<int>(std::max<size_t>(1, std::min<size_t>(wanted, max_blocks)));
  read_kernel<<<blocks, kReadThreads, 0, stream>>>(static_cast<const uint4*>(src), count, sink);
  return cudaGetLastError();
}

double measure_peak_read_gbps(double bytes, int repeats) {
  const size_t count = static_cast<size_t>(bytes) / sizeof(uint4);
  DeviceBuffer buf(count * sizeof(uint4)), sink(sizeof(unsigned));
  MHA_CUDA_CHECK(cudaMemset(buf.get(), 0x5a, buf.bytes()));
  int sms = 0;
  MHA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = sms * 8;
  cudaEvent_t start, stop;
  MHA_CUDA_CHECK(cudaEventCreate(&start));
  MHA_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> gbps;
  for (int r = 0; r < repeats + 2; ++r) {
    MHA_CUDA_CHECK(cudaEventRecord(start));
    MHA_CUDA_CHECK(launch_streaming_read(buf.get(), count * sizeof(uint4), sink.get<unsigned>(),
                                         blocks, nullptr));
    MHA_CUDA_CHECK(cudaEventRecord(stop));
    MHA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    MHA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 2) gbps.push_back(double(count * sizeof(uint4)) / (ms * 1e-3) / 1e9);  // 2 warm-ups
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(gbps);
}

}  // namespace mha
