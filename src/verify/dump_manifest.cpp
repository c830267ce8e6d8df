// verify --dump's manifest: the problem as an outside reference needs it.
#include "verify/dump_manifest.h"

#include "gpu/problem_data.h"  // kv_quantisation

namespace mha {

nlohmann::json dump_manifest(const Problem& p) {
  const ProblemShape& s = p.shape;
  nlohmann::json m;
  m["problem"] = s.name;
  m["shape"] = {{"batch", s.batch}, {"heads", s.heads},          {"kv_heads", s.kv_heads},
                {"depth", s.depth}, {"max_len", p.max_length()}, {"group", p.group()},
                {"q_len", s.q_len}};
  // A ragged step: each sequence's tokens; q, out, reference and tree_mask then hold the step's
  // tokens sequence after sequence, [tokens][heads][depth] ([tokens] words).
  if (!s.ragged_q_lens.empty()) m["shape"]["q_lens"] = s.ragged_q_lens;
  m["dtype"] = s.dtype;
  m["out_dtype"] = s.out_dtype;
  m["scale"] = p.effective_scale();
  m["mask"] = {{"kind", s.mask}, {"window", s.window}, {"chunk", s.chunk}};
  // The tree mask's words are tree_mask.npy: [batch][q_len], bit j where the token sees draft j.
  if (s.mask == "tree") m["mask"]["tree_depth"] = s.tree_depth;
  m["sink"] = s.has_sink;
  // 0: none; else each score s becomes soft_cap * tanh(s / soft_cap) before the mask and the sink.
  m["soft_cap"] = s.soft_cap;
  const KvQuantisation quant = kv_quantisation(s);
  m["cache"] = {{"kv", s.kv},
                {"page_size", s.page_size},
                {"kv_dtype", s.kv_dtype},
                {"kv_scale", s.kv_scale},
                {"k_scale", quant.k_scale},
                {"v_scale", quant.v_scale},
                {"values",
                 "k.npy and v.npy hold the values the cache stands for, in sequence order: an fp8 "
                 "code times its KV head's scale, gathered from the pages of a paged cache"}};
  m["layout"] =
      "q: [batch][q_len][heads][depth], token t at position length - q_len + t; k, v: "
      "[batch][max_len][kv_heads][depth] (slots past a length are NaN); out: "
      "[batch][q_len][heads][depth]";
  m["seed"] = p.seed;
  return m;
}

}  // namespace mha
