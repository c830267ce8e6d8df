// DecodePlan and run (decode_plan.h): the choice, the workspace layout, the step's work list and
// the launch. Host code over the registry, like decode_api.cpp.
#include "api/decode_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace mha {

namespace {

constexpr size_t kAlign = 16;
size_t align_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

DecodeStatus failure(DecodeStatusCode code, std::string message, cudaError_t cuda = cudaSuccess) {
  DecodeStatus s;
  s.code = code;
  s.message = std::move(message);
  s.cuda_error = cuda;
  return s;
}

DecodeStatus invalid(std::string message) {
  return failure(DecodeStatusCode::kInvalidArgument, std::move(message));
}

DecodeStatus cuda_failure(const char* what, cudaError_t err) {
  return failure(DecodeStatusCode::kCudaError, std::string(what) + ": " + cudaGetErrorString(err),
                 err);
}

bool is_fp8(const std::string& dtype) { return dtype == "e4m3" || dtype == "e5m2"; }
int cache_element_bytes(const DecodeShape& s) { return is_fp8(s.kv_dtype) ? 1 : 2; }
int element_bytes(const std::string& dtype) { return dtype == "fp32" ? 4 : 2; }

std::string check_shape(const DecodeShape& s) {
  if (s.batch < 1) return "shape.batch (the capacity in sequences) must be at least 1";
  if (s.max_keys < 1) return "shape.max_keys (the capacity in keys) must be at least 1";
  if (s.kv_heads < 1 || s.heads < 1 || s.heads % s.kv_heads != 0)
    return "shape.heads must be a positive multiple of shape.kv_heads";
  if (s.depth < 1) return "shape.depth must be positive";
  if (s.q_len < 1 || s.q_len > kMaxQueryTokens)
    return "shape.q_len (query tokens a sequence) must be 1.." + std::to_string(kMaxQueryTokens);
  if (s.kv != "contig" && s.kv != "paged" && s.kv != "paged_hnd")
    return "shape.kv '" + s.kv + "' is not contig, paged or paged_hnd";
  return "";
}

// The split of the plan: the caller's, else the defaults' (choose_decode_with_plans).
DecodeStatus choose(const DecodePlanOptions& o, int sm_count, const KernelEntry** kernel,
                    int* split, std::string* reason) {
  const DecodeChoice choice = choose_decode_with_plans(o.shape, sm_count);
  *kernel = choice.kernel;
  *split = choice.split;
  *reason = choice.reason;
  if (!o.kernel.empty()) {
    *kernel = find_kernel(o.kernel);
    if (*kernel == nullptr)
      return failure(DecodeStatusCode::kNotCompiled,
                     "kernel '" + o.kernel + "' is not compiled into this build");
    if (!kernel_computes(**kernel, o.shape))
      return invalid(
          "kernel '" + o.kernel +
          "' does not compute this shape (dtype, depth, group, cache, mask, sink, q_len)");
    *reason = "kernel given by the caller; split of the defaults' choice: " + choice.reason;
  }
  if (*kernel == nullptr) return failure(DecodeStatusCode::kNotCompiled, choice.reason);
  if (!o.split.empty()) {
    try {
      *split = parse_split_label(o.split);
    } catch (const std::invalid_argument& e) {
      return invalid(std::string("split: ") + e.what());
    }
    *reason = o.kernel.empty() ? choice.reason + "; split given by the caller"
                               : "kernel and split given by the caller";
  }
  return {};
}

// Visible key ranges of a step's sequences under the shape's mask.
std::vector<VisibleRange> visible_ranges(const int* lengths, int batch, const std::string& mask,
                                         int window, int chunk, int q_len) {
  const MaskKind kind = mask == "window"    ? MaskKind::kWindow
                        : mask == "chunked" ? MaskKind::kChunked
                        : mask == "causal"  ? MaskKind::kCausal
                                            : MaskKind::kNull;
  std::vector<VisibleRange> ranges;
  ranges.reserve(static_cast<size_t>(batch));
  for (int b = 0; b < batch; ++b)
    ranges.push_back(visible_range(lengths[b], kind, window, chunk, q_len));
  return ranges;
}

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kAlign == 0; }

// Every row the kernels copy is 16 bytes aligned: its base and every stride.
std::string check_view(const char* name, const void* base, long long seq_stride, int head_stride,
                       long long key_stride, int elem_bytes) {
  const long long align_elems = kAlign / elem_bytes;
  if (!aligned(base)) return std::string(name) + ": not 16-byte aligned";
  if (seq_stride < 0 || head_stride < 0 || key_stride < 0)
    return std::string(name) + ": negative strides are not supported";
  if (seq_stride % align_elems || head_stride % align_elems || key_stride % align_elems)
    return std::string(name) + ": strides must be multiples of " + std::to_string(align_elems) +
           " elements (16 bytes)";
  return "";
}

}  // namespace

DecodeStatus DecodePlan::make(const DecodePlanOptions& o, DecodePlan* plan) {
  if (plan == nullptr) return invalid("plan: null");
  if (const std::string why = check_shape(o.shape); !why.empty()) return invalid(why);
  const bool paged = o.shape.kv != "contig";
  if (paged && o.page_size < 1) return invalid("page_size must be positive for a paged cache");
  if (o.shape.mask == "window" && o.window < 1)
    return invalid("window: a window mask needs a positive window");
  if (o.shape.mask == "chunked" && o.chunk < 1)
    return invalid("chunk: a chunked mask needs a positive chunk");
  int sm_count = o.sm_count;
  if (sm_count <= 0) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
      err = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return cuda_failure("reading the device's SM count", err);
  }
  DecodePlan p;
  p.shape_ = o.shape;
  p.page_size_ = paged ? o.page_size : 0;
  p.window_ = o.window;
  p.chunk_ = o.chunk;
  if (DecodeStatus s = choose(o, sm_count, &p.kernel_, &p.split_, &p.reason_); !s.ok()) return s;
  const KernelTraits& t = p.kernel_->traits;
  const DecodeShape& s = o.shape;
  size_t at = 0;
  if (is_split_plan(p.split_)) {
    p.plan_target_.tile_keys = t.bn;
    p.plan_target_.blocks_per_item = s.kv_heads * row_blocks_per_kv_head(t, s.q_len);
    p.plan_target_.sm_count = sm_count;
    p.plan_knobs_ = decode_split_plan(p.split_);
    p.plan_capacity_ = split_plan_capacity(s.batch, p.plan_target_, p.plan_knobs_);
    p.work_at_ = 0;
    p.count_at_ = align_up(sizeof(WorkItem) * size_t(p.plan_capacity_));
    p.seqs_at_ = p.count_at_ + kAlign;
    at = align_up(p.seqs_at_ + sizeof(SeqSplit) * size_t(s.batch));
    // Sequences of one chunk write no partials: the work items bound the partial rows.
    p.partial_rows_ = size_t(p.plan_capacity_) * size_t(s.heads) * size_t(s.q_len);
  } else {
    const int count = split_partitions(p.split_);
    const bool cluster = is_cluster_split(p.split_);
    if (cluster && (count < 2 || count > kMaxClusterPartitions))
      return invalid("split: a cluster combines 2 to 8 partitions");
    if (!cluster && count > 1)
      p.partial_rows_ = size_t(s.batch) * size_t(s.heads) * size_t(s.q_len) * size_t(count);
  }
  p.partials_at_ = at;
  p.workspace_bytes_ = p.partial_rows_ > 0 || is_split_plan(p.split_)
                           ? align_up(at + p.partial_rows_ * (size_t(s.depth) + 2) * sizeof(float))
                           : 0;
  *plan = std::move(p);
  return {};
}

DecodeStatus DecodePlan::set_lengths(const int* lengths, int batch, void* workspace,
                                     cudaStream_t stream) {
  if (!needs_lengths()) return {};  // fixed splits read the device lengths
  if (lengths == nullptr || workspace == nullptr)
    return invalid("set_lengths: null lengths or workspace");
  if (!aligned(workspace)) return invalid("workspace: not 16-byte aligned");
  if (batch < 1 || batch > shape_.batch)
    return failure(DecodeStatusCode::kOverCapacity, "set_lengths: batch " + std::to_string(batch) +
                                                        " is outside the plan's 1.." +
                                                        std::to_string(shape_.batch));
  for (int b = 0; b < batch; ++b) {
    if (lengths[b] < 0 || lengths[b] > shape_.max_keys)
      return failure(DecodeStatusCode::kOverCapacity, "set_lengths: sequence " + std::to_string(b) +
                                                          " has " + std::to_string(lengths[b]) +
                                                          " keys, outside the plan's 0.." +
                                                          std::to_string(shape_.max_keys));
  }
  const SplitPlan built =
      build_split_plan(visible_ranges(lengths, batch, shape_.mask, window_, chunk_, shape_.q_len),
                       plan_target_, plan_knobs_);
  const int items = static_cast<int>(built.work.size());
  if (items > plan_capacity_)
    return failure(DecodeStatusCode::kOverCapacity,
                   "set_lengths: the split plan has " + std::to_string(items) +
                       " work items, over its capacity " + std::to_string(plan_capacity_));
  // Pageable sources: each copy is staged before it returns, so `built` may go out of scope.
  auto* bytes = static_cast<unsigned char*>(workspace);
  cudaError_t err =
      cudaMemcpyAsync(bytes + work_at_, built.work.data(), sizeof(WorkItem) * size_t(items),
                      cudaMemcpyHostToDevice, stream);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(bytes + count_at_, &items, sizeof(int), cudaMemcpyHostToDevice, stream);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(bytes + seqs_at_, built.seqs.data(), sizeof(SeqSplit) * size_t(batch),
                          cudaMemcpyHostToDevice, stream);
  if (err != cudaSuccess) return cuda_failure("set_lengths: copying the work list", err);
  planned_batch_ = batch;
  return {};
}

namespace {

// The arguments' pointers the shape needs.
std::string check_pointers(const DecodePlan& plan, const DecodeArgs& a) {
  const DecodeShape& s = plan.shape();
  if (a.q == nullptr || a.k_cache == nullptr || a.v_cache == nullptr || a.out == nullptr)
    return "q, k_cache, v_cache and out must all be set";
  if (a.seq_lens == nullptr) return "seq_lens: null (the step's lengths, on the device)";
  if (s.kv != "contig" && a.page_table == nullptr) return "page_table: null for a paged cache";
  if (s.has_sink && a.sink_logits == nullptr) return "sink_logits: null for a shape with a sink";
  if (s.mask == "tree" && a.tree_mask == nullptr) return "tree_mask: null for a tree mask";
  if (s.ragged_q_len && a.cu_seqlens_q == nullptr)
    return "cu_seqlens_q: null for a ragged_q_len shape (each sequence's token offsets)";
  if (!s.ragged_q_len && a.cu_seqlens_q != nullptr)
    return "cu_seqlens_q: set, but the plan's shape has q_len tokens a sequence (ragged_q_len is "
           "false)";
  if (is_fp8(s.kv_dtype) && (a.k_scale == nullptr || a.v_scale == nullptr))
    return "k_scale, v_scale: null for an fp8 cache";
  if (plan.workspace_bytes() > 0 && a.workspace == nullptr)
    return "workspace: null, the plan needs one";
  if (a.workspace != nullptr && !aligned(a.workspace)) return "workspace: not 16-byte aligned";
  return "";
}

std::string check_views(const DecodePlan& plan, const DecodeArgs& a) {
  const DecodeShape& s = plan.shape();
  const int q_bytes = element_bytes(s.dtype), out_bytes = element_bytes(s.out_dtype);
  const int kv_bytes = cache_element_bytes(s);
  // A token stride is checked as a third stride of the row (q and out have no key axis).
  if (std::string why =
          check_view("q", a.q, a.q_seq_stride, a.q_head_stride, a.q_token_stride, q_bytes);
      !why.empty())
    return why;
  if (std::string why = check_view("out", a.out, a.out_seq_stride, a.out_head_stride,
                                   a.out_token_stride, out_bytes);
      !why.empty())
    return why;
  for (const void* cache : {a.k_cache, a.v_cache}) {
    if (std::string why = check_view(cache == a.k_cache ? "k_cache" : "v_cache", cache,
                                     a.kv_seq_stride, a.kv_head_stride, a.kv_key_stride, kv_bytes);
        !why.empty())
      return why;
  }
  if (s.kv != "contig") {
    // The kernels hold a page's byte stride in an int (kv_operand.cuh).
    const long long page_elems =
        a.kv_seq_stride != 0 ? a.kv_seq_stride
                             : static_cast<long long>(plan.page_size()) * s.kv_heads * s.depth;
    if (page_elems * kv_bytes >= (1LL << 31))
      return "kv_seq_stride: a page must span less than 2 GiB";
  } else if (a.kv_max_keys < 0) {
    return "kv_max_keys must be positive";
  }
  return "";
}

}  // namespace

DecodeStatus run(const DecodePlan& plan, const DecodeArgs& a, cudaStream_t stream) {
  if (plan.kernel_ == nullptr) return invalid("run: the plan was never made (DecodePlan::make)");
  const DecodeShape& s = plan.shape();
  if (a.batch < 1 || a.batch > s.batch)
    return failure(DecodeStatusCode::kOverCapacity, "run: batch " + std::to_string(a.batch) +
                                                        " is outside the plan's 1.." +
                                                        std::to_string(s.batch));
  if (plan.needs_lengths() && a.batch != plan.planned_batch_)
    return invalid("run: batch " + std::to_string(a.batch) + " but set_lengths planned " +
                   std::to_string(plan.planned_batch_) +
                   " sequences (call set_lengths for this step)");
  if (std::string why = check_pointers(plan, a); !why.empty()) return invalid("run: " + why);
  if (std::string why = check_views(plan, a); !why.empty()) return invalid("run: " + why);
  if (plan.needs_lengths() &&
      ((a.window != 0 && a.window != plan.window_) || (a.chunk != 0 && a.chunk != plan.chunk_)))
    return invalid("run: window and chunk of a split plan are the plan's (DecodePlanOptions)");

  DecodeParams p;
  p.q = a.q;
  p.k_cache = a.k_cache;
  p.v_cache = a.v_cache;
  p.page_table = a.page_table;
  p.seq_lens = a.seq_lens;
  p.sink_logits = a.sink_logits;
  p.tree_mask = a.tree_mask;
  p.cu_seqlens_q = a.cu_seqlens_q;
  p.k_scale = a.k_scale;
  p.v_scale = a.v_scale;
  p.out = a.out;
  p.lse = a.lse;
  p.batch = a.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.max_keys = a.kv_max_keys != 0 ? a.kv_max_keys : s.max_keys;
  if (s.kv != "contig") {
    set_page_size(p, plan.page_size());
    p.max_pages_per_seq = a.max_pages_per_seq != 0
                              ? a.max_pages_per_seq
                              : (s.max_keys + plan.page_size() - 1) / plan.page_size();
  }
  p.window = a.window != 0 ? a.window : plan.window_;
  p.chunk = a.chunk != 0 ? a.chunk : plan.chunk_;
  p.scale = a.scale != 0.f ? a.scale : 1.f / std::sqrt(static_cast<float>(s.depth));
  p.soft_cap = a.soft_cap;
  p.q_len = s.q_len;
  p.q_seq_stride = a.q_seq_stride;
  p.q_token_stride = a.q_token_stride;
  p.q_head_stride = a.q_head_stride;
  p.out_seq_stride = a.out_seq_stride;
  p.out_token_stride = a.out_token_stride;
  p.out_head_stride = a.out_head_stride;
  p.kv_seq_stride = a.kv_seq_stride;
  p.kv_key_stride = a.kv_key_stride;
  p.kv_head_stride = a.kv_head_stride;
  // The launch's reduce overlaps the decode grid's tail (programmatic dependent launch), the
  // sweep's default mode.
  p.programmatic_reduce = true;
  auto* bytes = static_cast<unsigned char*>(a.workspace);
  if (plan.partial_rows_ > 0) {
    p.partial_out = reinterpret_cast<float*>(bytes + plan.partials_at_);
    p.partial_max = p.partial_out + plan.partial_rows_ * size_t(s.depth);
    p.partial_sum = p.partial_max + plan.partial_rows_;
  }
  if (plan.needs_lengths()) {
    p.partitions = 1;  // unused with a plan; launch_decode checks it is valid
    p.work = reinterpret_cast<const WorkItem*>(bytes + plan.work_at_);
    p.work_count = reinterpret_cast<const int*>(bytes + plan.count_at_);
    p.seq_splits = reinterpret_cast<const SeqSplit*>(bytes + plan.seqs_at_);
    p.work_capacity = plan.plan_capacity_;
  } else {
    p.partitions = split_partitions(plan.split_);
    p.cluster_combine = is_cluster_split(plan.split_);
  }
  const cudaError_t err = plan.kernel_->launch(p, stream);
  if (err != cudaSuccess)
    return cuda_failure(("run: launching " + plan.kernel_->name).c_str(), err);
  return {};
}

}  // namespace mha
