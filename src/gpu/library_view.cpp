// Problem and its generated inputs as the library's shape and arguments.
#include "gpu/library_view.h"

#include <algorithm>

namespace mha {

DecodeShape decode_shape_of(const Problem& problem) {
  const ProblemShape& s = problem.shape;
  DecodeShape d;
  d.dtype = s.dtype;
  d.out_dtype = s.out_dtype;
  d.kv_dtype = s.kv_dtype == s.dtype ? "" : s.kv_dtype;
  d.soft_cap = s.soft_cap > 0.f;
  d.kv = s.kv;
  d.mask = s.mask;
  d.has_sink = s.has_sink;
  d.depth = s.depth;
  d.heads = s.heads;
  d.kv_heads = s.kv_heads;
  d.batch = s.batch;
  d.max_keys = std::max(1, problem.max_length());
  d.q_len = s.q_len;
  d.ragged_q_len = !s.ragged_q_lens.empty();
  for (int n : problem.lengths) d.ragged = d.ragged || n != problem.lengths.front();
  return d;
}

DecodeArgs decode_args_of(const DecodeParams& in, const Problem& problem, void* out,
                          void* workspace) {
  DecodeArgs a;
  a.batch = problem.shape.batch;
  a.q = in.q;
  a.k_cache = in.k_cache;
  a.v_cache = in.v_cache;
  a.page_table = in.page_table;
  a.max_pages_per_seq = in.max_pages_per_seq;
  a.kv_max_keys = in.max_keys;
  a.seq_lens = in.seq_lens;
  a.sink_logits = in.sink_logits;
  a.tree_mask = in.tree_mask;
  a.cu_seqlens_q = in.cu_seqlens_q;
  a.k_scale = in.k_scale;
  a.v_scale = in.v_scale;
  a.scale = in.scale;
  a.soft_cap = in.soft_cap;
  a.window = in.window;
  a.chunk = in.chunk;
  a.out = out;
  a.workspace = workspace;
  return a;
}

}  // namespace mha
