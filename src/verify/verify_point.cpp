// Verification of one point: poison, launch, synchronise, compare.
#include "verify/verify_point.h"

#include <fmt/format.h>

#include "common/errors.h"

namespace mha {

VerifyOutcome verify_point(const KernelEntry& kernel, const Problem& problem,
                           const ProblemData& data, int partitions, const std::vector<double>& ref,
                           ReduceMode mode) {
  VerifyOutcome r;
  StepBuffers buffers(problem, kernel.traits, partitions, mode);
  DecodeParams p = data.params(0, partitions);
  buffers.attach(p);
  buffers.poison_all(0);
  const cudaError_t launch_err = kernel.launch(p, 0);
  if (launch_err != cudaSuccess) {
    if (!is_unsupported_launch(launch_err))
      throw_cuda_error(launch_err, kernel.name.c_str(), __FILE__, __LINE__);
    cudaGetLastError();  // clear the non-sticky error
    r.status = Status::kNotSupported;
    r.reason = fmt::format("launch failed: {}", cudaGetErrorString(launch_err));
    return r;
  }
  MHA_CUDA_CHECK(cudaDeviceSynchronize());
  r.output = buffers.download_output(problem.shape.out_dtype);
  r.error =
      compare_outputs(r.output, ref, tolerance_for(problem.shape.dtype, problem.shape.out_dtype));
  r.status = r.error.passed ? Status::kPassed : Status::kIncorrect;
  r.reason = r.error.reason;
  return r;
}

}  // namespace mha
