// The host ops: plans (make, describe, free, give a split plan its lengths), the kernel list and
// the defaults table. None launches a kernel; set_lengths copies the work list on the stream.
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <memory>
#include <sstream>
#include <vector>

#include "api/decode_api.h"
#include "api/decode_plan.h"
#include "src/checks.h"
#include "src/cuda_stream.h"
#include "src/ops.h"
#include "src/plan_registry.h"

#ifndef MHA_TUNE_CUDA_ARCHITECTURES
#define MHA_TUNE_CUDA_ARCHITECTURES ""
#endif

namespace mha_py {
namespace {

int to_int(int64_t v, const char* name) {
  TORCH_CHECK_VALUE(v >= 0 && v <= (int64_t{1} << 31) - 1, "make_plan: ", name, " = ", v,
                    " is out of range");
  return static_cast<int>(v);
}

// JSON string literal (names and traits are plain ASCII, but a reason may hold any text).
std::string quoted(const std::string& s) {
  std::ostringstream out;
  out << '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out << "\\u00" << hex[(c >> 4) & 0xf] << hex[c & 0xf];
    } else {
      out << c;
    }
  }
  out << '"';
  return out.str();
}

}  // namespace

int64_t make_plan(const std::string& dtype, const std::string& out_dtype,
                  const std::string& kv_dtype, bool soft_cap, const std::string& kv,
                  const std::string& mask, bool has_sink, int64_t depth, int64_t heads,
                  int64_t kv_heads, int64_t batch, int64_t max_keys, bool ragged, int64_t page_size,
                  int64_t window, int64_t chunk, const std::string& kernel,
                  const std::string& split, int64_t sm_count, int64_t q_len, bool ragged_q_len) {
  mha::DecodePlanOptions options;
  options.shape.dtype = dtype;
  options.shape.out_dtype = out_dtype;
  options.shape.kv_dtype = kv_dtype;
  options.shape.soft_cap = soft_cap;
  options.shape.kv = kv;
  options.shape.mask = mask;
  options.shape.has_sink = has_sink;
  options.shape.depth = to_int(depth, "depth");
  options.shape.heads = to_int(heads, "heads");
  options.shape.kv_heads = to_int(kv_heads, "kv_heads");
  options.shape.batch = to_int(batch, "batch");
  options.shape.max_keys = to_int(max_keys, "max_keys");
  options.shape.ragged = ragged;
  options.shape.q_len = to_int(q_len, "q_len");
  options.shape.ragged_q_len = ragged_q_len;
  options.page_size = to_int(page_size, "page_size");
  options.window = to_int(window, "window");
  options.chunk = to_int(chunk, "chunk");
  options.kernel = kernel;
  options.split = split;
  options.sm_count = to_int(sm_count, "sm_count");
  auto plan = std::make_shared<mha::DecodePlan>();
  throw_if_failed(mha::DecodePlan::make(options, plan.get()), "make_plan");
  return add_plan(std::move(plan));
}

std::tuple<std::string, std::string, std::string, int64_t, bool, int64_t, int64_t> plan_info(
    int64_t handle) {
  const auto plan = get_plan(handle, "plan_info");
  return {plan->kernel().name,   plan->split(),
          plan->reason(),        static_cast<int64_t>(plan->workspace_bytes()),
          plan->needs_lengths(), plan->planned_batch(),
          plan->page_size()};
}

void free_plan(int64_t handle) { remove_plan(handle); }

void set_lengths(int64_t handle, const at::Tensor& lengths, const at::Tensor& workspace) {
  const char* op = "set_lengths";
  const auto plan = get_plan(handle, op);
  TORCH_CHECK_VALUE(lengths.device().is_cpu(), op,
                    ": lengths must be a CPU tensor (the work list is planned on the host), not ",
                    lengths.device());
  TORCH_CHECK_VALUE(lengths.scalar_type() == c10::ScalarType::Int, op,
                    ": lengths must be int32, not ", lengths.scalar_type());
  check_dim(lengths, op, "lengths", 1);
  TORCH_CHECK_VALUE(workspace.device().is_cuda(), op, ": workspace must be a CUDA tensor, not ",
                    workspace.device());
  TORCH_CHECK_VALUE(workspace.is_contiguous(), op, ": workspace must be contiguous");
  TORCH_CHECK_VALUE(static_cast<size_t>(workspace.nbytes()) >= plan->workspace_bytes(), op,
                    ": workspace holds ", workspace.nbytes(), " bytes; the plan needs ",
                    plan->workspace_bytes());
  const at::Tensor host = lengths.contiguous();
  const c10::DeviceGuard guard(workspace.device());
  throw_if_failed(plan->set_lengths(host.data_ptr<int>(), static_cast<int>(host.numel()),
                                    workspace.data_ptr(), current_cuda_stream(workspace.device())),
                  op);
}

std::string kernels_json() {
  std::ostringstream out;
  out << '[';
  bool first = true;
  for (const mha::KernelEntry& k : mha::kernel_registry()) {
    const mha::KernelTraits& t = k.traits;
    out << (first ? "" : ",") << "{\"name\":" << quoted(k.name) << ",\"dtype\":" << quoted(t.dtype)
        << ",\"out_dtype\":" << quoted(t.out_dtype)
        << ",\"kv_dtype\":" << quoted(mha::cache_dtype(t)) << ",\"depth\":" << t.depth
        << ",\"group\":" << t.group << ",\"kv\":" << quoted(t.kv) << ",\"mask\":" << quoted(t.mask)
        << ",\"has_sink\":" << (t.has_sink ? "true" : "false")
        << ",\"soft_cap\":" << (t.soft_cap ? "true" : "false")
        << ",\"multi_token\":" << (t.multi_token ? "true" : "false") << ",\"bm\":" << t.bm
        << ",\"bn\":" << t.bn << ",\"bk\":" << t.bk << ",\"wm\":" << t.wm << ",\"wn\":" << t.wn
        << ",\"threads\":" << t.threads << ",\"stages\":" << t.stages
        << ",\"warp_split_k\":" << (t.warp_split_k ? "true" : "false")
        << ",\"smem_bytes\":" << t.smem_bytes << '}';
    first = false;
  }
  out << ']';
  return out.str();
}

void load_defaults(const std::string& path) {
  std::string error;
  TORCH_CHECK_VALUE(mha::load_decode_defaults(path, &error),
                    "load_defaults: ", error.empty() ? path : error);
}

std::string defaults_origin() { return mha::decode_defaults_origin(); }

std::tuple<std::string, std::string> build_info() {
  return {mha::built_config_label(), MHA_TUNE_CUDA_ARCHITECTURES};
}

int64_t current_stream(const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.device().is_cuda(), "current_stream: t must be a CUDA tensor");
  return static_cast<int64_t>(reinterpret_cast<std::intptr_t>(current_cuda_stream(t.device())));
}

}  // namespace mha_py
