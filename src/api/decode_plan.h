// Plan once, run many: what an engine calls for every decode step. A plan fixes the kernel, the
// split and the workspace for a shape and its capacity (the most sequences and keys a step may
// have); each step gives it the lengths (host, only for a split plan) and launches with views of
// the engine's own tensors, strides and all. Graph-safe: `run` reads the step's lengths and work
// list from device memory, so a graph captured once replays after set_lengths changed them.
// Installed with mha::decode; errors are status values with a message, never a silent no-op.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "api/decode_api.h"
#include "api/split_plan.h"

namespace mha {

enum class DecodeStatusCode : int {
  kOk = 0,
  kInvalidArgument =
      1,              // a shape, view or pointer the kernels cannot take (the message says which)
  kNotCompiled = 2,   // no kernel of this build computes the shape, or the named one is absent
  kOverCapacity = 3,  // more sequences, keys or work items than the plan was made for
  kCudaError = 4,     // a CUDA call failed (cuda_error holds it)
};

struct DecodeArgs;

struct DecodeStatus {
  DecodeStatusCode code = DecodeStatusCode::kOk;
  std::string message;
  cudaError_t cuda_error = cudaSuccess;
  bool ok() const { return code == DecodeStatusCode::kOk; }
};

// What a plan is made for. shape.batch is the capacity in sequences and shape.max_keys in keys
// per sequence; shape.ragged says the lengths differ (the defaults then prefer a split plan).
struct DecodePlanOptions {
  DecodeShape shape;
  int page_size = 0;          // paged caches: keys per page
  int window = 0, chunk = 0;  // window and chunked masks (a split plan's work list depends on them)
  // Overrides of the defaults' choice: a procedural kernel name, a split in its text form
  // ("16" partitions, "plan2x128" a balanced split plan with its knobs, "cluster4").
  std::string kernel;
  std::string split;
  int sm_count = 0;  // 0: the current device's
};

class DecodePlan {
 public:
  // Chooses (or takes) the kernel and the split and lays out the workspace; no device call
  // except reading the SM count when options.sm_count is 0.
  static DecodeStatus make(const DecodePlanOptions& options, DecodePlan* plan);

  const KernelEntry& kernel() const { return *kernel_; }
  int split_code() const { return split_; }  // split_code.h's encoding
  std::string split() const { return split_label(split_); }
  const std::string& reason() const { return reason_; }  // how the kernel and split were chosen
  const DecodeShape& shape() const { return shape_; }
  int page_size() const { return page_size_; }
  // Device bytes `run` needs in its workspace (16-byte aligned): the split plan's work list and
  // the split-K partials. 0 when neither is used.
  size_t workspace_bytes() const { return workspace_bytes_; }
  // A split plan needs each step's lengths (set_lengths) before its first run and whenever they
  // change; fixed and cluster splits read the device lengths `run` is given.
  bool needs_lengths() const { return is_split_plan(split_); }

  // The step's sequence lengths, on the host: builds the split plan's work list and copies it into
  // `workspace` on `stream` (stream-ordered before the next run; the array is free on return).
  // Not inside a stream capture: call it before replaying a graph that holds `run`.
  DecodeStatus set_lengths(const int* lengths, int batch, void* workspace, cudaStream_t stream);

  int planned_batch() const { return planned_batch_; }  // set_lengths's batch (0: none yet)
  int plan_capacity() const { return plan_capacity_; }  // work items the workspace holds

 private:
  friend DecodeStatus run(const DecodePlan&, const DecodeArgs&, cudaStream_t);
  const KernelEntry* kernel_ = nullptr;
  DecodeShape shape_;
  int page_size_ = 0, split_ = 1, window_ = 0, chunk_ = 0;
  std::string reason_;
  SplitPlanTarget plan_target_;
  SplitPlanKnobs plan_knobs_;
  int plan_capacity_ = 0, planned_batch_ = 0;
  // Workspace layout (bytes from its start): work items, their count, the sequences' splits, then
  // partial_out, partial_max and partial_sum.
  size_t work_at_ = 0, count_at_ = 0, seqs_at_ = 0, partials_at_ = 0, partial_rows_ = 0;
  size_t workspace_bytes_ = 0;
};

// Strides are in elements; 0 keeps the packed layout (decode_params.cuh). A head's depth elements
// are contiguous and 16-byte aligned.
struct DecodeArgs {
  int batch =
      0;  // this step's sequences, at most the plan's capacity (a split plan: set_lengths's)
  // [batch][q_len][heads][depth] of the shape's dtype; a ragged_q_len shape's [tokens][heads]
  // [depth], sequence b's at rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 (so for out, lse and
  // tree_mask); q_seq_stride and out_seq_stride are then unused.
  const void* q = nullptr;
  long long q_seq_stride = 0, q_token_stride = 0;
  int q_head_stride = 0;
  const void* k_cache = nullptr;  // contiguous: [capacity][max_keys][kv_heads][depth]; paged:
  const void* v_cache = nullptr;  // [pages][page_size][kv_heads][depth] (paged_hnd: heads first)
  long long kv_seq_stride = 0;    // contiguous: between sequences; paged: between pages
  int kv_key_stride = 0, kv_head_stride = 0;
  int kv_max_keys = 0;              // contiguous: key slots per sequence (0: the plan's max_keys)
  const int* page_table = nullptr;  // paged: [batch][max_pages_per_seq] on the device
  int max_pages_per_seq = 0;        // 0: enough for the plan's max_keys
  const int* seq_lens = nullptr;    // [batch] on the device
  const float* sink_logits = nullptr;  // [heads], shapes with a sink
  // Tree masks: [batch][q_len] 32-bit words on the device, bit j of token t's set where t attends
  // to draft j (the key at n - q_len + j); every token sees the keys before the drafts.
  const unsigned* tree_mask = nullptr;
  // ragged_q_len shapes: [batch + 1] token offsets on the device (FlashAttention's cu_seqlens_q,
  // FlashInfer's qo_indptr), cu_seqlens_q[0] = 0, at most q_len tokens a sequence.
  const int* cu_seqlens_q = nullptr;
  const float* k_scale = nullptr;  // [kv_heads], fp8 caches
  const float* v_scale = nullptr;
  float scale = 0.f;  // 0: 1 / sqrt(depth)
  float soft_cap = 0.f;
  int window = 0, chunk = 0;  // 0: the plan's (a split plan takes no other)
  void* out = nullptr;        // [batch][q_len][heads][depth] of the shape's out_dtype
  long long out_seq_stride = 0, out_token_stride = 0;
  int out_head_stride = 0;
  float* lse = nullptr;       // optional [batch][q_len][heads]: ln sum exp(score) of each row
  void* workspace = nullptr;  // plan.workspace_bytes(), 16-byte aligned
};

// Launches the plan's kernel (and its reduce) for one step; never synchronises.
DecodeStatus run(const DecodePlan& plan, const DecodeArgs& args, cudaStream_t stream);

}  // namespace mha
