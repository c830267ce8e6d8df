// Verification of one point: poison, launch, synchronise, compare.
#include "point_runner.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include "../kernels/ptx.cuh"

namespace mha {

ReduceMode reduce_mode_from_name(const std::string& name) {
  if (name == "fused") return ReduceMode::kFused;
  if (name == "separate") return ReduceMode::kSeparate;
  if (name == "programmatic") return ReduceMode::kProgrammatic;
  throw UsageError(fmt::format("--reduce: '{}' is not one of fused, separate, programmatic", name));
}

StepBuffers::StepBuffers(const Problem& problem, int partitions, ReduceMode mode)
    : programmatic_reduce(mode == ReduceMode::kProgrammatic) {
  const ProblemShape& s = problem.shape;
  const size_t rows = size_t(s.batch) * s.heads;
  out = DeviceBuffer(rows * s.depth * (s.out_dtype == "fp32" ? 4 : 2));
  if (partitions > 1) {
    partial_out = DeviceBuffer(rows * partitions * s.depth * sizeof(float));
    partial_max = DeviceBuffer(rows * partitions * sizeof(float));
    partial_sum = DeviceBuffer(rows * partitions * sizeof(float));
    if (mode == ReduceMode::kFused) {
      split_counters = DeviceBuffer(rows * sizeof(unsigned));
      MHA_CUDA_CHECK(cudaMemset(split_counters.get(), 0, split_counters.bytes()));
    }
  }
}

void StepBuffers::attach(DecodeParams& p) const {
  p.out = out.get();
  p.partial_out = partial_out.get<float>();
  p.partial_max = partial_max.get<float>();
  p.partial_sum = partial_sum.get<float>();
  p.split_counters = split_counters.get<unsigned>();
  p.programmatic_reduce = programmatic_reduce;
}

void StepBuffers::poison_all(cudaStream_t stream) const {
  poison(out.get(), out.bytes(), stream);
  poison(partial_out.get(), partial_out.bytes(), stream);
  poison(partial_max.get(), partial_max.bytes(), stream);
  poison(partial_sum.get(), partial_sum.bytes(), stream);
}

std::vector<float> StepBuffers::download_output(const std::string& out_dtype) const {
  std::vector<float> result;
  auto fetch = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> raw(out.bytes() / sizeof(T));
    MHA_CUDA_CHECK(cudaMemcpy(raw.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    result.resize(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) result[i] = ptx::to_float(raw[i]);
  };
  if (out_dtype == "fp32") fetch(float{});
  else if (out_dtype == "fp16") fetch(__half{});
  else fetch(__nv_bfloat16{});
  return result;
}

bool is_unsupported_launch(cudaError_t err) {
  return err == cudaErrorInvalidConfiguration || err == cudaErrorLaunchOutOfResources ||
         err == cudaErrorInvalidValue || err == cudaErrorMemoryAllocation ||
         err == cudaErrorInvalidDeviceFunction || err == cudaErrorNoKernelImageForDevice;
}

VerifyOutcome verify_point(const KernelEntry& kernel, const Problem& problem,
                           const ProblemData& data, int partitions, const std::vector<double>& ref,
                           ReduceMode mode) {
  VerifyOutcome r;
  StepBuffers buffers(problem, partitions, mode);
  DecodeParams p = data.params(0, partitions);
  buffers.attach(p);
  buffers.poison_all(0);
  const cudaError_t launch_err = kernel.launch(p, 0);
  if (launch_err != cudaSuccess) {
    if (!is_unsupported_launch(launch_err)) throw_cuda_error(launch_err, kernel.name.c_str(), __FILE__, __LINE__);
    cudaGetLastError();  // clear the non-sticky error
    r.status = Status::kNotSupported;
    r.reason = fmt::format("launch failed: {}", cudaGetErrorString(launch_err));
    return r;
  }
  MHA_CUDA_CHECK(cudaDeviceSynchronize());
  r.output = buffers.download_output(problem.shape.out_dtype);
  r.error = compare_outputs(r.output, ref, tolerance_for(problem.shape.dtype, problem.shape.out_dtype));
  r.status = r.error.passed ? Status::kPassed : Status::kIncorrect;
  r.reason = r.error.reason;
  return r;
}

}  // namespace mha
