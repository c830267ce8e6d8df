// One point's buffers: outputs, split-K partials and plans, poisoning, and the launch's errors.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

#include "common/kinds.h"
#include "gpu/point_runner.h"
#include "kernels/cluster_combine.cuh"
#include "kernels/ptx.cuh"

namespace mha {

ReduceMode reduce_mode_from_name(const std::string& name) {
  if (name == "fused") return ReduceMode::kFused;
  if (name == "separate") return ReduceMode::kSeparate;
  if (name == "programmatic") return ReduceMode::kProgrammatic;
  if (name == "cluster") return ReduceMode::kCluster;
  throw UsageError(
      fmt::format("--reduce: '{}' is not one of fused, separate, programmatic, cluster", name));
}

StepBuffers::StepBuffers(const Problem& problem, const KernelTraits& kernel, int partitions_,
                         ReduceMode mode)
    : programmatic_reduce(mode == ReduceMode::kProgrammatic),
      cluster_combine(mode == ReduceMode::kCluster || is_cluster_split(partitions_)),
      partitions(partitions_),
      batch(problem.shape.batch) {
  const ProblemShape& s = problem.shape;
  // (token, head) pairs: the partials' layout gives every sequence q_len tokens, a ragged step's
  // output only its own.
  const size_t query_rows_per_seq = size_t(s.q_len) * s.heads;
  const size_t rows = s.batch * query_rows_per_seq;
  const size_t out_rows = size_t(total_query_tokens(s)) * s.heads;
  out = DeviceBuffer(out_rows * s.depth * element_bytes(s.out_dtype));
  // Partitions that combine in a cluster keep their rows in distributed shared memory.
  size_t partial_rows = partial_rows_per_head() * query_rows_per_seq;
  if (is_split_plan(partitions)) {
    int device = 0;
    MHA_CUDA_CHECK(cudaGetDevice(&device));
    MHA_CUDA_CHECK(
        cudaDeviceGetAttribute(&plan_target.sm_count, cudaDevAttrMultiProcessorCount, device));
    plan_target.tile_keys = kernel.bn;
    plan_target.blocks_per_item = s.kv_heads * row_blocks_per_kv_head(kernel, s.q_len);
    plan_knobs = decode_split_plan(partitions);
    plan_capacity = split_plan_capacity(s.batch, plan_target, plan_knobs);
    work = DeviceBuffer(sizeof(WorkItem) * plan_capacity);
    work_count = DeviceBuffer(sizeof(int));
    seq_splits = DeviceBuffer(sizeof(SeqSplit) * s.batch);
    // Sequences of one chunk write no partials, so the work items bound the partial rows.
    partial_rows = size_t(plan_capacity) * query_rows_per_seq;
    replan(visible_ranges(problem), 0);
    MHA_CUDA_CHECK(cudaStreamSynchronize(0));
  }
  if (partial_rows > 0) {
    partial_out = DeviceBuffer(partial_rows * s.depth * sizeof(float));
    partial_max = DeviceBuffer(partial_rows * sizeof(float));
    partial_sum = DeviceBuffer(partial_rows * sizeof(float));
    if (mode == ReduceMode::kFused && !is_split_plan(partitions)) {
      split_counters = DeviceBuffer(rows * sizeof(unsigned));
      MHA_CUDA_CHECK(cudaMemset(split_counters.get(), 0, split_counters.bytes()));
    }
  }
}

void StepBuffers::replan(const std::vector<VisibleRange>& visible, cudaStream_t stream) {
  if (!is_split_plan(partitions))
    throw std::logic_error("StepBuffers::replan: this split is a fixed partition count");
  if (static_cast<int>(visible.size()) != batch)
    throw std::logic_error(
        fmt::format("StepBuffers::replan: {} ranges for a batch of {}", visible.size(), batch));
  const auto start = std::chrono::steady_clock::now();
  plan = build_split_plan(visible, plan_target, plan_knobs);
  plan_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const int items = static_cast<int>(plan.work.size());
  if (items > plan_capacity)
    throw std::logic_error(
        fmt::format("split plan of {} items exceeds its capacity {}", items, plan_capacity));
  // Synchronous copies: the host vectors are reused by the next replan.
  MHA_CUDA_CHECK(cudaStreamSynchronize(stream));
  MHA_CUDA_CHECK(
      cudaMemcpy(work.get(), plan.work.data(), sizeof(WorkItem) * items, cudaMemcpyHostToDevice));
  MHA_CUDA_CHECK(cudaMemcpy(work_count.get(), &items, sizeof(int), cudaMemcpyHostToDevice));
  MHA_CUDA_CHECK(cudaMemcpy(seq_splits.get(), plan.seqs.data(), sizeof(SeqSplit) * batch,
                            cudaMemcpyHostToDevice));
}

int StepBuffers::fixed_count() const {
  return is_split_plan(partitions) ? 1 : split_partitions(partitions);
}

long long StepBuffers::partial_rows_per_head() const {
  if (is_split_plan(partitions)) return plan.partial_rows_per_head;
  // A cluster combine keeps the partitions' rows in distributed shared memory (launch_decode).
  const int count = fixed_count();
  if (cluster_combines(cluster_combine, count)) return 0;
  return count > 1 ? static_cast<long long>(batch) * count : 0;
}

void StepBuffers::attach(DecodeParams& p) const {
  p.out = out.get();
  p.partial_out = partial_out.get<float>();
  p.partial_max = partial_max.get<float>();
  p.partial_sum = partial_sum.get<float>();
  p.split_counters = split_counters.get<unsigned>();
  p.programmatic_reduce = programmatic_reduce;
  p.cluster_combine = cluster_combine;
  if (is_split_plan(partitions)) {
    p.partitions = 1;  // unused with a plan, but launch_decode checks it is valid
    p.work = work.get<WorkItem>();
    p.work_count = work_count.get<int>();
    p.seq_splits = seq_splits.get<SeqSplit>();
    p.work_capacity = plan_capacity;
  } else {
    p.partitions = fixed_count();  // a cluster split's code is not a count
  }
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
  switch (dtype_from_name(out_dtype)) {
    case Dtype::kFp32:
      fetch(float{});
      break;
    case Dtype::kFp16:
      fetch(__half{});
      break;
    case Dtype::kBf16:
      fetch(__nv_bfloat16{});
      break;
    case Dtype::kE4m3:
    case Dtype::kE5m2:
      throw std::logic_error(
          "StepBuffers::download_output: an fp8 output dtype (outputs are 16- or 32-bit)");
  }
  return result;
}

bool is_unsupported_launch(cudaError_t err) {
  return err == cudaErrorInvalidConfiguration || err == cudaErrorLaunchOutOfResources ||
         err == cudaErrorInvalidValue || err == cudaErrorMemoryAllocation ||
         err == cudaErrorInvalidDeviceFunction || err == cudaErrorNoKernelImageForDevice;
}

}  // namespace mha
