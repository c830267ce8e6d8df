// The float64 CPU reference: the contract's formula evaluated directly, with the sink joining
// the denominator only and natural-log exponentials (the kernels use log2: an independent path).
// Several query tokens: token t of a sequence of n keys at position n - q_len + t (a ragged step:
// the sequence's own count), its keys tested with the contract's key_visible (a tree token: with
// its word of the problem's trees); rows token-major over the step's tokens.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/kinds.h"
#include "kernels/masks.cuh"
#include "sweep/memory_budget.h"
#include "verify/reference.h"

namespace mha {

std::vector<double> cpu_reference(const Problem& problem, const HostInputs& in) {
  const ProblemShape& s = problem.shape;
  const int d = s.depth, group = s.heads / s.kv_heads;
  const double scale = problem.effective_scale();
  const MaskKind kind = mask_from_name(s.mask);
  const std::vector<int> tokens = sequence_q_lens(s), starts = query_token_starts(s);
  std::vector<double> out(size_t(starts.back()) * s.heads * d, 0.0);
  std::vector<double> scores;
  for (int b = 0; b < s.batch; ++b)
    for (int t = 0; t < tokens[b]; ++t) {
      const int n = in.lengths[b];
      const size_t token_row = size_t(starts[b]) + t;  // token-major over the step's tokens
      for (int h = 0; h < s.heads; ++h) {
        const int kvh = h / group;
        const size_t query_row = token_row * s.heads + h;
        const float* q = &in.q[query_row * d];
        auto row = [&](const std::vector<float>& cache, int key) {
          return &cache[((size_t(b) * in.max_len + key) * s.kv_heads + kvh) * d];
        };
        const TreeWord tree = in.tree_words.empty() ? 0u : in.tree_words[token_row];
        scores.assign(n, -std::numeric_limits<double>::infinity());
        double m =
            s.has_sink ? double(in.sink_logits[h]) : -std::numeric_limits<double>::infinity();
        for (int j = 0; j < n; ++j) {
          if (!key_visible(kind, j, n, s.window, s.chunk, tokens[b], t, tree)) continue;
          const float* k = row(in.k, j);
          double dot = 0;
          for (int c = 0; c < d; ++c) dot += double(q[c]) * double(k[c]);
          scores[j] = dot * scale;
          if (s.soft_cap > 0) scores[j] = s.soft_cap * std::tanh(scores[j] / s.soft_cap);
          m = std::max(m, scores[j]);
        }
        if (m == -std::numeric_limits<double>::infinity()) continue;  // nothing visible: 0
        double denom = s.has_sink ? std::exp(double(in.sink_logits[h]) - m) : 0.0;
        double* o = &out[query_row * d];
        for (int j = 0; j < n; ++j) {
          if (scores[j] == -std::numeric_limits<double>::infinity()) continue;
          const double w = std::exp(scores[j] - m);
          denom += w;
          const float* v = row(in.v, j);
          for (int c = 0; c < d; ++c) o[c] += w * double(v[c]);
        }
        for (int c = 0; c < d; ++c) o[c] /= denom;
      }
    }
  return out;
}

std::vector<double> reference_output(const Problem& problem, const ProblemData& data) {
  if (use_cpu_reference(problem)) return cpu_reference(problem, data.download());
  return gpu_reference(problem, data);
}

}  // namespace mha
