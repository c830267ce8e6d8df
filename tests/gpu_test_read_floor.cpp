// GPU tests of the per-problem floor (src/gpu/read_floor.cu): a read of more bytes takes longer, a
// large read runs near the probe's bandwidth, and stream and graph timing both work.
#include <gtest/gtest.h>

#include "gpu/bandwidth_probe.h"
#include "gpu/read_floor.h"
#include "tests/gpu_test_support.h"

namespace mha {
namespace {

TEST(ReadFloor, GrowsWithTheBytesAndApproachesThePeak) {
  MHA_REQUIRE_GPU();
  cudaStream_t stream;  // graphs are captured from a created stream, as the sweep does
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  TimingOptions graph;
  const double small = time_read_floor(2.0e6, 16, graph, stream).median_us;
  const double large = time_read_floor(512.0e6, 1, graph, stream).median_us;
  EXPECT_GT(small, 0.5);   // a graph-launched kernel never takes nothing
  EXPECT_LT(small, 50.0);  // ~3 us on an H200
  EXPECT_GT(large, 20 * small);
  const double peak = measure_peak_read_gbps(2.0e9, 5);
  const double large_gbps = 512.0e6 / (large * 1e-6) / 1e9;
  EXPECT_GT(large_gbps, 0.6 * peak) << "large read " << large_gbps << " GB/s, peak " << peak;
  TimingOptions stream_mode;
  stream_mode.use_graph = false;
  EXPECT_GT(time_read_floor(2.0e6, 4, stream_mode, stream).median_us, 0);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace mha
