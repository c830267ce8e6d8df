// The library entry points an engine calls: find a compiled kernel instance by its procedural
// name, size the split-K workspace, launch one decode step. Installed with mha::decode.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "registry/kernel_registry.h"

namespace mha {

// The compiled instance with this procedural name, or nullptr when this build lacks it.
const KernelEntry* find_kernel(const std::string& name);

// Bytes of the split-K partials one step needs: partial_out [batch][q_len][heads][partitions]
// [depth], then partial_max and partial_sum [batch][q_len][heads][partitions], all float, back to
// back (the sizes point_runner.cu's StepBuffers allocates; q_len the most tokens a sequence of a
// ragged step). 0 when partitions <= 1: no partials are read.
size_t decode_workspace_bytes(int batch, int heads, int depth, int partitions, int q_len = 1);

// Points p.partial_out/max/sum into one buffer of decode_workspace_bytes(p.batch, p.heads, depth,
// p.partitions, p.q_len) bytes, in the order above (null pointers when p.partitions <= 1).
void attach_decode_workspace(DecodeParams& p, int depth, void* workspace);

// One decode step's shape as an engine knows it: what picks a kernel and a split.
struct DecodeShape {
  std::string dtype = "bf16";  // q (and K, V unless kv_dtype names an fp8 cache)
  std::string out_dtype = "bf16";
  std::string kv_dtype;       // "" or dtype: a 16-bit cache; "e4m3" | "e5m2": fp8 with scales
  bool soft_cap = false;      // the kernel soft-caps scores (DecodeParams::soft_cap)
  std::string kv = "contig";  // "contig" | "paged" | "paged_hnd"
  std::string mask = "null";  // "null" | "causal" | "window" | "chunked" | "tree"
  bool has_sink = false;
  int depth = 128, heads = 32, kv_heads = 8, batch = 1;
  int max_keys = 1;     // the longest sequence of the batch
  bool ragged = false;  // the sequences' lengths differ
  // Query tokens per sequence (speculative verify steps: 2..8 drafts); token t of a sequence of n
  // keys sits at position n - q_len + t. Several run on the multi-token kernels.
  int q_len = 1;
  // A ragged step: each sequence has 0..q_len tokens (DecodeArgs::cu_seqlens_q), token t of a
  // sequence of m of them at position n - m + t. Runs on the multi-token kernels, whatever q_len.
  bool ragged_q_len = false;
};

// A kernel and a partition count for a shape, and how they were chosen.
struct DecodeChoice {
  const KernelEntry* kernel = nullptr;  // null: no compiled instance computes the shape
  int split = 1;       // split_code.h's encoding: a count, a split plan or a cluster
  int partitions = 1;  // the count of a fixed or cluster split (a plan: 0)
  // Set DecodeParams::cluster_combine: the partitions combine in a thread-block cluster inside
  // the decode launch (no workspace needed); the tuned choice of the shape's own bucket only.
  bool cluster_combine = false;
  bool is_tuned = false;  // the shape's own bucket was measured and its kernel is compiled in
  std::string reason;
};

// The tuned default for a shape on a GPU of sm_count SMs, from a defaults table `mha-tune select
// --out-defaults F` wrote (per family, a kernel and split every half octave of batch x kv_heads and
// of keys, chosen from its measurements and its time model): the one loaded at run time, else the
// one compiled in (CMake's MHA_DEFAULTS_JSON, results/defaults/nvidia_h200.json unless set), each
// only on a GPU of its own SM count. The entry's kernel, or the instance of the same tile for the
// shape's out_dtype; off the shape's own measured bucket, the table's time model for the shape
// (a family the table never measured takes its nearest fitted family's tiles); where neither
// serves (another GPU, a ragged shape of an unmeasured family, a kernel not in this build) the
// family's first compiled kernel, partitions from the table's rule. `reason` says which.
DecodeChoice choose_decode(const DecodeShape& shape, int sm_count);
// The same choice with split plans allowed (what DecodePlan::make takes): a plan the table chose,
// and for a ragged shape without an entry the default plan instead of the rule's count.
DecodeChoice choose_decode_with_plans(const DecodeShape& shape, int sm_count);

// Whether the instance computes the shape (dtypes, depth, group, cache, mask, sink, soft cap, one
// query token or several).
bool kernel_computes(const KernelEntry& kernel, const DecodeShape& shape);

// Loads the table choose_decode answers from first. Without a call, the file the environment
// variable MHA_TUNE_DEFAULTS names is read at the first choice (unreadable: ignored). Returns
// false with *error naming the file and what is wrong; the table in use stays.
bool load_decode_defaults(const std::string& path, std::string* error = nullptr);
void unload_decode_defaults();         // back to the compiled-in table (the variable not read)
std::string decode_defaults_origin();  // the loaded file, or "" (the compiled-in table)

// Launches the named instance on the stream (the decode kernel, plus the split-K reduce when
// p.partitions > 1 and they do not combine in a cluster; never synchronises).
// cudaErrorInvalidValue with no launch when the name is not compiled in, or when the partials
// are needed and missing.
cudaError_t decode(const DecodeParams& p, const std::string& kernel_name, cudaStream_t stream);

}  // namespace mha
