// Device-memory estimate of a problem, mirroring the allocations of ProblemData, StepBuffers and
// gpu_reference (keep them in step when those change).
#include "sweep/memory_budget.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "api/split_plan.h"
#include "common/errors.h"
#include "common/kinds.h"

namespace mha {

int rotation_copies(double bytes_per_copy, int l2_bytes, double max_total_bytes) {
  const double target = 4.0 * l2_bytes;  // four L2s of other data between two uses of a copy
  int copies = static_cast<int>(std::ceil(target / std::max(1.0, bytes_per_copy)));
  copies = std::min(copies, static_cast<int>(max_total_bytes / std::max(1.0, bytes_per_copy)));
  return std::clamp(copies, 1, 512);
}

bool use_cpu_reference(const Problem& p) {
  double macs = 0;
  for (int n : p.lengths) macs += double(n) * p.shape.q_len * p.shape.heads * p.shape.depth;
  return macs <= kCpuReferenceMaxMacs;
}

namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

MemoryNeed problem_device_bytes(const Problem& problem, int copies, bool fused_reduce) {
  const ProblemShape& s = problem.shape;
  const double elem = 2;  // bf16 and fp16 inputs
  const double max_len = std::max(1, problem.max_length());
  const double row_elems = double(s.kv_heads) * s.depth;
  const double q = double(s.batch) * s.q_len * s.heads * s.depth * elem;
  const double logical_kv = 2 * double(s.batch) * max_len * row_elems * elem;
  MemoryNeed need;
  need.copies = std::max(1, copies);
  double fixed = 4.0 * s.batch;  // lengths
  if (s.has_sink) fixed += 4.0 * s.heads;
  if (is_paged(s.kv) && s.page_size > 0) {
    double pages = 0, max_pages = 0;
    for (int n : problem.lengths) {
      const double p = (n + s.page_size - 1) / s.page_size;
      pages += p;
      max_pages = std::max(max_pages, p);
    }
    fixed += 4.0 * s.batch * max_pages;  // page table
    const double paged_kv = 2 * std::max(1.0, pages) * s.page_size * row_elems * elem;
    // Copy 0 keeps its logical K/V (for the reference); each later copy is staged through a
    // logical pair freed once scattered into pages.
    need.inputs_bytes = need.copies * (q + paged_kv) + logical_kv * (need.copies > 1 ? 2 : 1);
  } else {
    need.inputs_bytes = need.copies * (q + logical_kv);
  }
  need.inputs_bytes += fixed;

  const double rows = double(s.batch) * s.q_len * s.heads;  // query rows: (token, head) pairs
  // The largest fixed partition count sizes the partials. A cluster split (P + 2^20 on the axis)
  // keeps its partials in distributed shared memory, and a plan (negative) is not counted here:
  // read as counts, cluster8 asked 390 GiB for batch 6 at 128 heads.
  int partitions = 1;
  for (int p : problem.partitions)
    if (!is_split_plan(p) && !is_cluster_split(p)) partitions = std::max(partitions, p);
  need.outputs_bytes = rows * s.depth * element_bytes(s.out_dtype);
  if (partitions > 1) {
    need.outputs_bytes += rows * partitions * (s.depth + 2) * 4.0;
    if (fused_reduce) need.outputs_bytes += rows * 4.0;
  }
  if (!use_cpu_reference(problem))
    need.reference_bytes = rows * s.depth * 4.0 + rows * max_len * 4.0;
  need.reserve_bytes = kDeviceReserveBytes;
  return need;
}

std::optional<std::string> memory_shortfall(const Problem& problem, const MemoryNeed& need,
                                            size_t free_bytes, int device) {
  if (need.total() <= static_cast<double>(free_bytes)) return std::nullopt;
  return fmt::format(
      "problem {} needs {} of device memory ({} input cop{} {}, outputs and partials {}, "
      "reference {}, reserve {}) but GPU {} has {} free",
      problem.shape.name, gib(need.total()), need.copies, need.copies == 1 ? "y" : "ies",
      gib(need.inputs_bytes), gib(need.outputs_bytes), gib(need.reference_bytes),
      gib(need.reserve_bytes), device, gib(static_cast<double>(free_bytes)));
}

size_t free_device_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  MHA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace mha
