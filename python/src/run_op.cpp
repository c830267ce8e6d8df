// mha_tune::run: one decode step on the caller's tensors. Every view is checked against the plan
// (dtype, device, sizes, a contiguous and 16-byte aligned last dimension) and its strides go to
// the kernels as they are, so slices and the halves of a combined K/V cache run without a copy.
// No allocation, no synchronisation, no host read of device data: capturable in a CUDA graph.
// q, out and lse hold a row per sequence for a one-token plan, and a row per token otherwise
// (token-major: q_len a sequence, or a ragged plan's cu_seqlens_q[b] ..).
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <limits>
#include <string>

#include "api/decode_plan.h"
#include "src/checks.h"
#include "src/cuda_stream.h"
#include "src/ops.h"
#include "src/plan_registry.h"

namespace mha_py {
namespace {

constexpr const char* kOp = "run";

int run_int(int64_t v, const char* name) {
  TORCH_CHECK_VALUE(v >= 0 && v <= std::numeric_limits<int>::max(), kOp, ": ", name, " = ", v,
                    " is out of range");
  return static_cast<int>(v);
}

// Where the cache's sequence (or page), key and KV-head dimensions are, by the plan's layout.
struct CacheDims {
  int seq = 0, key = 1, head = 2;
};
CacheDims cache_dims(const std::string& kv) {
  return kv == "paged_hnd" ? CacheDims{0, 2, 1} : CacheDims{0, 1, 2};
}

void check_cache(const at::Tensor& c, const char* name, const mha::DecodePlan& plan,
                 c10::Device device, int64_t batch) {
  const mha::DecodeShape& s = plan.shape();
  const CacheDims d = cache_dims(s.kv);
  check_device(c, kOp, name, device);
  check_dim(c, kOp, name, 4);
  check_dtype(c, kOp, name, s.kv_dtype.empty() ? s.dtype : s.kv_dtype);
  check_size(c, kOp, name, d.head, s.kv_heads, "KV heads");
  check_size(c, kOp, name, 3, s.depth, "depth elements");
  if (s.kv == "contig") {
    TORCH_CHECK_VALUE(c.size(0) >= batch, kOp, ": ", name, " holds ", c.size(0),
                      " sequences; q has ", batch,
                      " (a contiguous cache is [sequences, max_keys, kv_heads, depth])");
  } else {
    check_size(c, kOp, name, d.key, plan.page_size(), "keys per page");
  }
  check_rows_aligned(c, kOp, name);
}

// An optional per-head float vector (sinks [heads], scales [kv_heads]): required exactly when the
// plan reads it.
const float* head_vector(const c10::optional<at::Tensor>& t, const char* name, bool needed,
                         const char* why, int64_t size, c10::Device device) {
  if (!needed) {
    TORCH_CHECK_VALUE(!t.has_value(), kOp, ": ", name, " was given but the plan ", why,
                      " (make the plan for it)");
    return nullptr;
  }
  TORCH_CHECK_VALUE(t.has_value(), kOp, ": ", name, " is required: the plan ", why);
  check_device(*t, kOp, name, device);
  check_dtype(*t, kOp, name, "fp32");
  check_dim(*t, kOp, name, 1);
  check_size(*t, kOp, name, 0, size, "entries");
  TORCH_CHECK_VALUE(t->is_contiguous(), kOp, ": ", name, " must be contiguous");
  return t->data_ptr<float>();
}

// The step's sequences from q's rows: one a row for one token, q_len rows each for several, and
// cu_seqlens_q's entries less one for a ragged plan (whose q holds cu_seqlens_q[batch] rows: a
// device value, not read here).
int64_t step_batch(const mha::DecodeShape& s, int64_t rows,
                   const c10::optional<at::Tensor>& cu_seqlens_q, c10::Device device) {
  if (!s.ragged_q_len) {
    TORCH_CHECK_VALUE(!cu_seqlens_q.has_value(), kOp,
                      ": cu_seqlens_q was given but the plan has q_len = ", s.q_len,
                      " tokens every sequence (make it with ragged_q_len)");
    TORCH_CHECK_VALUE(rows % s.q_len == 0, kOp, ": q has ", rows, " rows, not a multiple of the ",
                      "plan's q_len = ", s.q_len, " (a row per token, token-major)");
    return rows / s.q_len;
  }
  TORCH_CHECK_VALUE(cu_seqlens_q.has_value(), kOp,
                    ": cu_seqlens_q is required: the plan's sequences have ragged token counts");
  const at::Tensor& t = *cu_seqlens_q;
  check_device(t, kOp, "cu_seqlens_q", device);
  TORCH_CHECK_VALUE(t.scalar_type() == c10::ScalarType::Int, kOp,
                    ": cu_seqlens_q must be int32, not ", t.scalar_type());
  check_dim(t, kOp, "cu_seqlens_q", 1);
  TORCH_CHECK_VALUE(t.size(0) >= 1 && t.is_contiguous(), kOp,
                    ": cu_seqlens_q must be contiguous with batch + 1 entries, not sizes ",
                    t.sizes());
  return t.size(0) - 1;
}

// The tree mask's words, one per token: required exactly for a tree plan.
const unsigned* tree_words(const c10::optional<at::Tensor>& t, const mha::DecodeShape& s,
                           int64_t rows, c10::Device device) {
  if (s.mask != "tree") {
    TORCH_CHECK_VALUE(!t.has_value(), kOp, ": tree_mask was given but the plan's mask is ", s.mask);
    return nullptr;
  }
  TORCH_CHECK_VALUE(t.has_value(), kOp,
                    ": tree_mask is required: the plan's mask is tree (a 32-bit word a token)");
  check_device(*t, kOp, "tree_mask", device);
  TORCH_CHECK_VALUE(t->scalar_type() == c10::ScalarType::Int, kOp,
                    ": tree_mask must be int32 (bit j: the token sees draft j), not ",
                    t->scalar_type());
  check_dim(*t, kOp, "tree_mask", 1);
  TORCH_CHECK_VALUE(t->size(0) >= rows && t->is_contiguous(), kOp,
                    ": tree_mask must be contiguous with a word per row of q (", rows,
                    "), not sizes ", t->sizes());
  return reinterpret_cast<const unsigned*>(t->data_ptr<int>());
}

}  // namespace

void run(int64_t handle, const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
         const at::Tensor& seq_lens, const c10::optional<at::Tensor>& page_table,
         const c10::optional<at::Tensor>& sinks, const c10::optional<at::Tensor>& k_scale,
         const c10::optional<at::Tensor>& v_scale, double scale, double soft_cap, int64_t window,
         int64_t chunk, const c10::optional<at::Tensor>& cu_seqlens_q,
         const c10::optional<at::Tensor>& tree_mask, const at::Tensor& workspace,
         const at::Tensor& out, const c10::optional<at::Tensor>& lse) {
  const auto plan = get_plan(handle, kOp);
  const mha::DecodeShape& s = plan->shape();
  const c10::Device device = q.device();
  TORCH_CHECK_VALUE(device.is_cuda(), kOp, ": q must be a CUDA tensor, not on ", device);

  check_dim(q, kOp, "q", 3);
  check_dtype(q, kOp, "q", s.dtype);
  check_size(q, kOp, "q", 1, s.heads, "heads");
  check_size(q, kOp, "q", 2, s.depth, "depth elements");
  check_rows_aligned(q, kOp, "q");
  const int64_t rows = q.size(0);
  const int64_t batch = step_batch(s, rows, cu_seqlens_q, device);
  TORCH_CHECK_VALUE(batch <= s.batch, kOp, ": q has ", batch,
                    " sequences; the plan was made for at most ", s.batch);

  check_device(out, kOp, "out", device);
  check_dim(out, kOp, "out", 3);
  check_dtype(out, kOp, "out", s.out_dtype);
  TORCH_CHECK_VALUE(out.size(0) == rows, kOp, ": out has ", out.size(0), " rows; q has ", rows);
  check_size(out, kOp, "out", 1, s.heads, "heads");
  check_size(out, kOp, "out", 2, s.depth, "depth elements");
  check_rows_aligned(out, kOp, "out");

  check_cache(k_cache, "k_cache", *plan, device, batch);
  check_cache(v_cache, "v_cache", *plan, device, batch);
  // One set of cache strides serves K and V (DecodeArgs): the views must agree.
  TORCH_CHECK_VALUE(k_cache.sizes() == v_cache.sizes() && k_cache.strides() == v_cache.strides(),
                    kOp, ": k_cache and v_cache must have the same sizes and strides (",
                    k_cache.sizes(), " / ", k_cache.strides(), " vs ", v_cache.sizes(), " / ",
                    v_cache.strides(), ")");

  check_device(seq_lens, kOp, "seq_lens", device);
  TORCH_CHECK_VALUE(seq_lens.scalar_type() == c10::ScalarType::Int, kOp,
                    ": seq_lens must be int32, not ", seq_lens.scalar_type());
  check_dim(seq_lens, kOp, "seq_lens", 1);
  TORCH_CHECK_VALUE(seq_lens.size(0) >= batch && seq_lens.is_contiguous(), kOp,
                    ": seq_lens must be contiguous with at least one entry per sequence of q (",
                    batch, "), not sizes ", seq_lens.sizes());

  mha::DecodeArgs args;
  args.batch = static_cast<int>(batch);
  args.q = q.data_ptr();
  args.q_token_stride = stride_ll(q, 0, kOp, "q");  // rows are tokens (one a sequence, or q_len)
  args.q_seq_stride = args.q_token_stride * s.q_len;
  args.q_head_stride = stride_int(q, 1, kOp, "q");
  args.out = out.data_ptr();
  args.out_token_stride = stride_ll(out, 0, kOp, "out");
  args.out_seq_stride = args.out_token_stride * s.q_len;
  args.out_head_stride = stride_int(out, 1, kOp, "out");
  if (s.ragged_q_len) args.cu_seqlens_q = cu_seqlens_q->data_ptr<int>();
  args.tree_mask = tree_words(tree_mask, s, rows, device);

  const CacheDims d = cache_dims(s.kv);
  args.k_cache = k_cache.data_ptr();
  args.v_cache = v_cache.data_ptr();
  args.kv_seq_stride = stride_ll(k_cache, d.seq, kOp, "k_cache");
  args.kv_key_stride = stride_int(k_cache, d.key, kOp, "k_cache");
  args.kv_head_stride = stride_int(k_cache, d.head, kOp, "k_cache");
  if (s.kv == "contig") args.kv_max_keys = run_int(k_cache.size(1), "k_cache's key slots");

  args.seq_lens = seq_lens.data_ptr<int>();
  if (s.kv == "contig") {
    TORCH_CHECK_VALUE(!page_table.has_value(), kOp,
                      ": page_table was given but the plan's cache is contiguous");
  } else {
    TORCH_CHECK_VALUE(page_table.has_value(), kOp, ": page_table is required: the plan's cache is ",
                      s.kv);
    const at::Tensor& t = *page_table;
    check_device(t, kOp, "page_table", device);
    TORCH_CHECK_VALUE(t.scalar_type() == c10::ScalarType::Int, kOp,
                      ": page_table must be int32, not ", t.scalar_type());
    check_dim(t, kOp, "page_table", 2);
    TORCH_CHECK_VALUE(t.size(0) >= batch, kOp, ": page_table has ", t.size(0), " rows; q has ",
                      batch);
    TORCH_CHECK_VALUE(t.stride(1) == 1 && (t.size(0) == 1 || t.stride(0) == t.size(1)), kOp,
                      ": page_table rows must be packed, [batch, max_pages_per_seq] row-major "
                      "(strides ",
                      t.strides(), ")");
    args.page_table = t.data_ptr<int>();
    args.max_pages_per_seq = run_int(t.size(1), "page_table's pages per sequence");
  }

  const std::string cache = s.kv_dtype.empty() ? s.dtype : s.kv_dtype;
  const bool fp8 = cache == "e4m3" || cache == "e5m2";
  args.sink_logits = head_vector(sinks, "sinks", s.has_sink, "has a sink", s.heads, device);
  args.k_scale = head_vector(k_scale, "k_scale", fp8, "reads an fp8 cache", s.kv_heads, device);
  args.v_scale = head_vector(v_scale, "v_scale", fp8, "reads an fp8 cache", s.kv_heads, device);

  args.scale = static_cast<float>(scale);
  if (s.soft_cap) {
    TORCH_CHECK_VALUE(soft_cap > 0, kOp, ": soft_cap must be positive: the plan soft-caps scores");
  } else {
    TORCH_CHECK_VALUE(soft_cap == 0, kOp, ": soft_cap = ", soft_cap,
                      " but the plan was made without soft capping");
  }
  args.soft_cap = static_cast<float>(soft_cap);
  TORCH_CHECK_VALUE(s.mask == "window" || window == 0, kOp, ": window = ", window,
                    " but the plan's mask is ", s.mask);
  TORCH_CHECK_VALUE(s.mask == "chunked" || chunk == 0, kOp, ": chunk = ", chunk,
                    " but the plan's mask is ", s.mask);
  args.window = run_int(window, "window");
  args.chunk = run_int(chunk, "chunk");

  if (lse.has_value()) {
    const at::Tensor& t = *lse;
    check_device(t, kOp, "lse", device);
    check_dtype(t, kOp, "lse", "fp32");
    check_dim(t, kOp, "lse", 2);
    TORCH_CHECK_VALUE(t.size(0) == rows, kOp, ": lse has ", t.size(0), " rows; q has ", rows);
    check_size(t, kOp, "lse", 1, s.heads, "heads");
    TORCH_CHECK_VALUE(t.is_contiguous(), kOp, ": lse must be contiguous, [rows of q, heads]");
    args.lse = t.data_ptr<float>();
  }

  check_device(workspace, kOp, "workspace", device);
  TORCH_CHECK_VALUE(workspace.is_contiguous(), kOp, ": workspace must be contiguous");
  TORCH_CHECK_VALUE(static_cast<size_t>(workspace.nbytes()) >= plan->workspace_bytes(), kOp,
                    ": workspace holds ", workspace.nbytes(), " bytes; the plan needs ",
                    plan->workspace_bytes());
  args.workspace = workspace.data_ptr();

  if (batch == 0) return;  // nothing to launch (a split plan would refuse a zero batch)
  const c10::DeviceGuard guard(device);
  throw_if_failed(mha::run(*plan, args, current_cuda_stream(device)), kOp);
}

void run_not_cuda(int64_t, const at::Tensor& q, const at::Tensor&, const at::Tensor&,
                  const at::Tensor&, const c10::optional<at::Tensor>&,
                  const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&,
                  const c10::optional<at::Tensor>&, double, double, int64_t, int64_t,
                  const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&,
                  const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&) {
  TORCH_CHECK_VALUE(false, kOp, ": q must be a CUDA tensor, not on ", q.device(),
                    " (the kernels run on NVIDIA GPUs only)");
}

}  // namespace mha_py
