// The functions behind the mha_tune:: torch ops (library.cpp gives their schemas and dispatch
// keys). Host ops take no device tensor or only fill a workspace; `run` is the one per-step op.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>

#include <cstdint>
#include <string>
#include <tuple>

namespace mha_py {

// Makes a plan (DecodePlan::make) and returns its handle. sm_count 0: the current device's;
// window and chunk are the masks' (a split plan's work list depends on them); q_len the query
// tokens a sequence (the most, with ragged_q_len: each run's cu_seqlens_q gives the counts).
int64_t make_plan(const std::string& dtype, const std::string& out_dtype,
                  const std::string& kv_dtype, bool soft_cap, const std::string& kv,
                  const std::string& mask, bool has_sink, int64_t depth, int64_t heads,
                  int64_t kv_heads, int64_t batch, int64_t max_keys, bool ragged, int64_t page_size,
                  int64_t window, int64_t chunk, const std::string& kernel,
                  const std::string& split, int64_t sm_count, int64_t q_len, bool ragged_q_len);
// (kernel name, split text, reason, workspace bytes, needs_lengths, planned batch, page size).
std::tuple<std::string, std::string, std::string, int64_t, bool, int64_t, int64_t> plan_info(
    int64_t plan);
void free_plan(int64_t plan);
// lengths: CPU int32 [batch]; workspace: the device buffer `run` will be given.
void set_lengths(int64_t plan, const at::Tensor& lengths, const at::Tensor& workspace);

std::string kernels_json();  // every compiled kernel: name and traits, as a JSON list
void load_defaults(const std::string& path);
std::string defaults_origin();
// (config label, CUDA architectures) the installed kernels were built from and for.
std::tuple<std::string, std::string> build_info();
// The raw cudaStream_t `run` would launch on for t's device (tests check it is torch's).
int64_t current_stream(const at::Tensor& t);

void run(int64_t plan, const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
         const at::Tensor& seq_lens, const c10::optional<at::Tensor>& page_table,
         const c10::optional<at::Tensor>& sinks, const c10::optional<at::Tensor>& k_scale,
         const c10::optional<at::Tensor>& v_scale, double scale, double soft_cap, int64_t window,
         int64_t chunk, const c10::optional<at::Tensor>& cu_seqlens_q,
         const c10::optional<at::Tensor>& tree_mask, const at::Tensor& workspace,
         const at::Tensor& out, const c10::optional<at::Tensor>& lse);
// The CPU (and any non-CUDA) kernel of run: a ValueError naming q's device.
void run_not_cuda(int64_t plan, const at::Tensor& q, const at::Tensor& k_cache,
                  const at::Tensor& v_cache, const at::Tensor& seq_lens,
                  const c10::optional<at::Tensor>& page_table,
                  const c10::optional<at::Tensor>& sinks, const c10::optional<at::Tensor>& k_scale,
                  const c10::optional<at::Tensor>& v_scale, double scale, double soft_cap,
                  int64_t window, int64_t chunk, const c10::optional<at::Tensor>& cu_seqlens_q,
                  const c10::optional<at::Tensor>& tree_mask, const at::Tensor& workspace,
                  const at::Tensor& out, const c10::optional<at::Tensor>& lse);

}  // namespace mha_py
