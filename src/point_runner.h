// Running one (kernel, problem, partitions) point: output buffers, poisoning, the launch with its
// error classified into a disposition, and the check against the reference.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "device_buffer.h"
#include "kernel_registry.h"
#include "problem.h"
#include "problem_data.h"
#include "result_row.h"
#include "verification.h"

namespace mha {

// How the split-K partitions are combined: inside the decode kernel (one launch per step) or by
// a separate reduce launch.
enum class ReduceMode { kFused, kSeparate };
ReduceMode reduce_mode_from_name(const std::string& name);  // throws UsageError

// Output and split-K partial buffers sized for one problem and partition count.
struct StepBuffers {
  StepBuffers(const Problem& problem, int partitions, ReduceMode mode = ReduceMode::kFused);
  void attach(DecodeParams& p) const;
  void poison_all(cudaStream_t stream) const;
  std::vector<float> download_output(const std::string& out_dtype) const;
  DeviceBuffer out, partial_out, partial_max, partial_sum, split_counters;
};

// Launch-time failures that mean "this configuration cannot run here" rather than a broken
// context: recorded as not_supported and the sweep goes on. Sticky errors throw CudaError.
bool is_unsupported_launch(cudaError_t err);

struct VerifyOutcome {
  Status status = Status::kFailed;
  std::string reason;
  ErrorReport error;
  std::vector<float> output;  // the kernel's output (for --dump)
};

VerifyOutcome verify_point(const KernelEntry& kernel, const Problem& problem,
                           const ProblemData& data, int partitions, const std::vector<double>& ref,
                           ReduceMode mode = ReduceMode::kFused);

}  // namespace mha
