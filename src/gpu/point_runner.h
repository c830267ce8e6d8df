// Running one (kernel, problem, partitions) point: output buffers, poisoning, the launch with its
// error classified into a disposition (verify/verify_point.h checks the output).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "api/split_plan.h"
#include "common/result_row.h"
#include "gpu/device_buffer.h"
#include "gpu/problem_data.h"
#include "problems/problem.h"
#include "registry/kernel_registry.h"

namespace mha {

// How the split-K partitions are combined: by a separate reduce launch, launched with programmatic
// dependent launch (the sweep's default: 3% faster than a plain second launch over the split
// points of an H200 A/B, up to 0.5 us at batch 1 and 512 keys, docs/performance.md), by a plain
// second launch, or inside the decode kernel by the last block of each row block (one launch per
// step; 13% slower than the separate launch over the g4 sweep's split points).
enum class ReduceMode { kFused, kSeparate, kProgrammatic, kCluster };
ReduceMode reduce_mode_from_name(const std::string& name);  // throws UsageError

// Output and split-K partial buffers sized for one problem and split: a partition count, or a
// balanced split plan (split_plan.h) for this kernel's tile on this device, with its work list
// in fixed-size device buffers. The fused reduce does not combine plans (they use the
// separate reduce, programmatically launched when asked for).
struct StepBuffers {
  StepBuffers(const Problem& problem, const KernelTraits& kernel, int partitions,
              ReduceMode mode = ReduceMode::kSeparate);
  void attach(DecodeParams& p) const;
  void poison_all(cudaStream_t stream) const;
  std::vector<float> download_output(const std::string& out_dtype) const;
  // Plans the split again for new lengths into the same buffers (a captured graph replays it);
  // the visible ranges must not need more work items than the capacity. Plans only.
  void replan(const std::vector<VisibleRange>& visible, cudaStream_t stream);
  // Partial rows per query row (one head of one token) the current split writes (step bytes).
  long long partial_rows_per_head() const;
  // Partitions of a fixed or cluster split (1 for a plan, whose work list says).
  int fixed_count() const;

  DeviceBuffer out, partial_out, partial_max, partial_sum, split_counters;
  bool programmatic_reduce = false;
  bool cluster_combine = false;
  // Plans only: the work list and per-sequence splits, and the last plan made on the host.
  DeviceBuffer work, work_count, seq_splits;
  SplitPlanTarget plan_target;
  SplitPlanKnobs plan_knobs;
  int plan_capacity = 0;
  SplitPlan plan;
  double plan_us = 0;  // host time of the last build_split_plan
  int partitions = 1;  // the split: a count, a plan (< 0) or a cluster split (split_plan.h)
  int batch = 0;
};

// Launch-time failures that mean "this configuration cannot run here" rather than a broken
// context: recorded as not_supported and the sweep goes on. Sticky errors throw CudaError.
bool is_unsupported_launch(cudaError_t err);

}  // namespace mha
