// The mha_tune:: op schemas and their kernels, registered when torch loads _C.so.
//   host ops (no tensor, or a host list and a workspace): catch-all kernels, run eagerly outside
//     graphs and compiled regions; set_lengths writes the workspace (alias annotation) on the
//     current stream.
//   run: a CUDA kernel, plus a CPU one that names the wrong device; the fake (meta) kernel that
//     torch.compile traces with is Python's (mha_tune/_ops.py, named by set_python_module so that
//     torch can import it on demand). A mutating op returning nothing: out, lse and the workspace
//     are written in place, so functionalization keeps the writes.
#include <torch/library.h>

#include "src/ops.h"

TORCH_LIBRARY(mha_tune, m) {
  m.set_python_module("mha_tune._ops");
  m.def(
      "make_plan(str dtype, str out_dtype, str kv_dtype, bool soft_cap, str kv, str mask, "
      "bool has_sink, int depth, int heads, int kv_heads, int batch, int max_keys, bool ragged, "
      "int page_size, int window, int chunk, str kernel, str split, int sm_count, int q_len, "
      "bool ragged_q_len) -> int",
      &mha_py::make_plan);
  m.def(
      "plan_info(int plan) -> (str kernel, str split, str reason, int workspace_bytes, "
      "bool needs_lengths, int planned_batch, int page_size)",
      &mha_py::plan_info);
  m.def("free_plan(int plan) -> ()", &mha_py::free_plan);
  m.def("set_lengths(int plan, Tensor lengths, Tensor(a!) workspace) -> ()", &mha_py::set_lengths);
  m.def("kernels() -> str", &mha_py::kernels_json);
  m.def("load_defaults(str path) -> ()", &mha_py::load_defaults);
  m.def("defaults_origin() -> str", &mha_py::defaults_origin);
  m.def("build_info() -> (str config, str cuda_architectures)", &mha_py::build_info);
  m.def("current_stream(Tensor t) -> int", &mha_py::current_stream);
  m.def(
      "run(int plan, Tensor q, Tensor k_cache, Tensor v_cache, Tensor seq_lens, "
      "Tensor? page_table, Tensor? sinks, Tensor? k_scale, Tensor? v_scale, float scale, "
      "float soft_cap, int window, int chunk, Tensor? cu_seqlens_q, Tensor? tree_mask, "
      "Tensor(c!) workspace, Tensor(a!) out, Tensor(b!)? lse) -> ()");
}

TORCH_LIBRARY_IMPL(mha_tune, CUDA, m) { m.impl("run", &mha_py::run); }

TORCH_LIBRARY_IMPL(mha_tune, CPU, m) { m.impl("run", &mha_py::run_not_cuda); }
