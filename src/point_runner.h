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

// How the split-K partitions are combined: by a separate reduce launch, launched with programmatic
// dependent launch (the sweep's default: 3% faster than a plain second launch over the split
// points of an H200 A/B, up to 0.5 us at batch 1 and 512 keys, docs/performance.md), by a plain
// second launch, or inside the decode kernel by the last block of each row block (one launch per
// step; 13% slower than the separate launch over the g4 sweep's split points).
enum class ReduceMode { kFused, kSeparate, kProgrammatic };
ReduceMode reduce_mode_from_name(const std::string& name);  // throws UsageError

// Output and split-K partial buffers sized for one problem and partition count.
struct StepBuffers {
  StepBuffers(const Problem& problem, int partitions, ReduceMode mode = ReduceMode::kSeparate);
  void attach(DecodeParams& p) const;
  void poison_all(cudaStream_t stream) const;
  std::vector<float> download_output(const std::string& out_dtype) const;
  DeviceBuffer out, partial_out, partial_max, partial_sum, split_counters;
  bool programmatic_reduce = false;
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
                           ReduceMode mode = ReduceMode::kSeparate);

}  // namespace mha
