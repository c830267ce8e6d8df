// Event timing over CUDA-graph replays or plain launches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gpu/step_timer.h"

namespace mha {

namespace {

class Events {
 public:
  Events() {
    MHA_CUDA_CHECK(cudaEventCreate(&start));
    MHA_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  cudaEvent_t start = nullptr, stop = nullptr;
};

class Graph {
 public:
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

}  // namespace

TimingStats time_launches(const std::vector<StepLaunch>& steps, const TimingOptions& options,
                          cudaStream_t stream, const std::string& what) {
  auto launch_checked = [&](const StepLaunch& step) {
    const cudaError_t err = step(stream);
    if (err != cudaSuccess) throw_cuda_error(err, what.c_str(), __FILE__, __LINE__);
  };
  Graph graph;
  if (options.use_graph) {
    MHA_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (const StepLaunch& step : steps) {
      const cudaError_t err = step(stream);
      if (err != cudaSuccess) {
        cudaGraph_t broken = nullptr;
        cudaStreamEndCapture(stream, &broken);
        if (broken) cudaGraphDestroy(broken);
        throw_cuda_error(err, what.c_str(), __FILE__, __LINE__);
      }
    }
    MHA_CUDA_CHECK(cudaStreamEndCapture(stream, &graph.graph));
    MHA_CUDA_CHECK(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
  }
  // A sample is the whole graph (every step) with graphs, one step otherwise.
  const int steps_per_sample = options.use_graph ? static_cast<int>(steps.size()) : 1;
  size_t next = 0;
  auto run_sample = [&] {
    if (options.use_graph) {
      MHA_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream));
    } else {
      launch_checked(steps[next]);
      next = (next + 1) % steps.size();
    }
  };

  using Clock = std::chrono::steady_clock;
  const auto warm_start = Clock::now();
  do {
    run_sample();
    MHA_CUDA_CHECK(cudaStreamSynchronize(stream));
  } while (std::chrono::duration<double>(Clock::now() - warm_start).count() < options.warmup_s);

  Events ev;
  SampleCollector collector(options.stop);
  const auto start = Clock::now();
  while (!collector.should_stop()) {
    MHA_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    run_sample();
    MHA_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    MHA_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float ms = 0;
    MHA_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    collector.add_sample_us(ms * 1e3 / steps_per_sample,
                            std::chrono::duration<double>(Clock::now() - start).count());
  }
  return collector.stats();
}

int steps_per_graph(int copies) { return std::max(copies, 8); }

TimingStats time_step(const KernelEntry& kernel, const ProblemData& data, int partitions,
                      const StepBuffers& buffers, const TimingOptions& options,
                      cudaStream_t stream) {
  // Each sample walks every copy once, so a copy is re-read only after the others pushed it out.
  const int count = options.use_graph ? steps_per_graph(data.copies()) : data.copies();
  std::vector<StepLaunch> steps;
  for (int i = 0; i < count; ++i) {
    DecodeParams p = data.params(i % data.copies(), partitions);
    buffers.attach(p);
    steps.push_back([&kernel, p](cudaStream_t s) { return kernel.launch(p, s); });
  }
  return time_launches(steps, options, stream, kernel.name);
}

}  // namespace mha
