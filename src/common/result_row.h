// One measurement: a (kernel, problem, partitions) point with its disposition, timing statistics,
// bandwidth and verification error. The unit of the journal, the reports, select and compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "registry/kernel_registry.h"

namespace mha {

// The problem shape one row was measured on (what select buckets and compare matches on).
struct ProblemShape {
  std::string name;  // stable id, e.g. "b1_h32_kv8_d128_n4096_contig_null"
  int batch = 1;
  int heads = 32;
  int kv_heads = 8;
  int depth = 128;
  std::string dtype = "bf16";
  std::string out_dtype = "bf16";
  std::string kv_dtype = "bf16";  // the cache's dtype: dtype, or fp8 ("e4m3" | "e5m2")
  std::string kv_scale;           // fp8 only: "tensor" | "head" (one scale per KV head)
  double soft_cap = 0;            // > 0: scores become soft_cap * tanh(score / soft_cap)
  std::string kv = "contig";      // "contig" | "paged" | "paged_hnd" (pages in HND order)
  int page_size = 0;              // paged only
  std::string mask = "null";      // "null" | "causal" | "window" | "chunked" | "tree"
  int window = 0;
  int chunk = 0;
  int tree_depth = 0;  // tree mask only: the depth of each sequence's draft tree (draft_tree.h)
  bool has_sink = false;
  // Query tokens per sequence (speculative verify steps); token t of q_len sits at position
  // n - q_len + t of a sequence of n keys, and several need a multi-token kernel.
  int q_len = 1;
  // A ragged step's tokens per sequence (0 .. q_len, q_len the most); empty when each has q_len.
  // Ragged steps run on multi-token kernels, whatever their most.
  std::vector<int> ragged_q_lens;
  int keys = 0;         // max length in the batch (all equal unless ragged)
  std::string lengths;  // "" when every sequence has `keys`, else "ragged:<spec>"
  // Every sequence's length when the batch is ragged (empty when all have `keys`): the name
  // above shortens long lists, and select's split rules read each length.
  std::vector<int> ragged_lengths;
};

// Whether the step needs a multi-token kernel: several tokens a sequence, or ragged counts.
inline bool multi_token_step(const ProblemShape& s) {
  return s.q_len > 1 || !s.ragged_q_lens.empty();
}

// Disposition of one row, as in the CUTLASS profiler.
enum class Status { kPassed, kIncorrect, kFailed, kNotSupported, kSkipped };
const char* status_name(Status s);
Status status_from_name(const std::string& s);  // throws std::invalid_argument

struct TimingStats {
  double median_us = 0, min_us = 0, mean_us = 0, stdev_us = 0;
  int samples = 0;
  double q1_us = 0, q3_us = 0;  // quartiles (0: a report written before they were kept)
  // The samples themselves, for the sweep's optional sidecar (samples_file.h); not in the row.
  std::vector<double> samples_us;
};

// A summary without its samples (tests, reports read back).
inline TimingStats timing_stats(double median_us, double min_us, double mean_us, double stdev_us,
                                int samples) {
  TimingStats t;
  t.median_us = median_us;
  t.min_us = min_us;
  t.mean_us = mean_us;
  t.stdev_us = stdev_us;
  t.samples = samples;
  return t;
}

struct ResultRow {
  std::string kernel;  // procedural name
  KernelTraits traits;
  ProblemShape problem;
  int partitions = 1;
  Status status = Status::kSkipped;
  std::string reason;  // why not passed (empty when passed)
  TimingStats time;
  double bytes = 0;  // bytes the step must move
  double achieved_gbps = 0;
  double peak_fraction = 0;  // of the peak read bandwidth measured in the same run
  // The problem's floor: a plain streaming read of exactly its visible K/V bytes, launched like
  // the step (graph replay over the same number of rotated copies), timed once per problem and
  // run. 0: not measured (an older report, or too little free memory for its buffers).
  double floor_us = 0;
  // Host time to build the split plan for this point (split_plan.h), once per point outside the
  // timed region, as engines plan before they replay a graph; 0 for fixed partition counts.
  double plan_us = 0;
  double rel_l2_error = 0;
  double max_abs_error = 0;
  double sm_clock_mhz = 0;  // mean SM clock while timing (0 if unknown)
  bool throttled = false;
  int device = 0;
};

// Identity of a point everywhere (journal, compare): "<kernel>|<problem name>|p<partitions>".
std::string point_key(const std::string& kernel, const std::string& problem_name, int partitions);
std::string point_key(const ResultRow& row);

// What every report carries about the run that produced it.
struct RunMetadata {
  int schema_version = 1;
  std::string tool_version;
  std::string git_commit;
  std::string gpu_name;
  int sm_count = 0;
  double sm_clock_max_mhz = 0;
  double mem_clock_max_mhz = 0;
  int l2_bytes = 0;
  std::string driver_version;
  std::string cuda_version;
  std::string timestamp;  // ISO 8601, UTC
  std::string config_file;
  std::string config_hash;  // FNV-1a 64 of the config file's bytes, hex
  std::string command_line;
  double peak_read_gbps = 0;  // streaming-read bandwidth measured at start
  uint64_t seed = 0;
  std::string timing_mode;               // "graph" | "stream"
  std::string reduce_mode = "separate";  // split-K combine: "fused" | "separate"
  bool cold_cache = true;
  // Sharded sweeps (--shard K/N): which shard this report holds; -1 and 0 when not sharded.
  int shard_index = -1;
  int shard_count = 0;
  std::string devices;  // GPUs that measured the rows, e.g. "node12:0,node12:1"
  // Added later (optional when read). driver_version above is the CUDA version the driver
  // supports (cudaDriverGetVersion); this is the driver release nvidia-smi shows, e.g. "580.159".
  std::string nvidia_driver_version;
  // One per entry of `devices`, comma-separated, as nvidia-smi prints them:
  // "GPU-8f7c...", "00000000:3B:00.0".
  std::string gpu_uuids;
  std::string gpu_pci_bus_ids;
  double wall_time_s = 0;  // the sweep's wall time (the last run's, when resumed)
};

}  // namespace mha
