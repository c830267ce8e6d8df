#include "problems/draft_tree.h"

#include <algorithm>
#include <random>

#include "common/kinds.h"

namespace mha {

std::vector<TreeWord> draft_tree(int q_len, int depth, unsigned long long seed) {
  std::vector<TreeWord> words(q_len);
  std::vector<int> level(q_len);  // 1 for a root
  std::mt19937_64 rng(seed);
  for (int t = 0; t < q_len; ++t) {
    int parent = t < depth ? t - 1 : -1;  // the chain; t - 1 is -1 for the root
    if (t >= depth) {                     // under a random earlier token with room below it
      std::vector<int> open;
      for (int u = 0; u < t; ++u)
        if (level[u] < depth) open.push_back(u);
      if (!open.empty()) parent = open[rng() % open.size()];
    }
    words[t] = (parent >= 0 ? words[parent] : 0u) | (TreeWord{1} << t);
    level[t] = parent >= 0 ? level[parent] + 1 : 1;
  }
  return words;
}

std::vector<TreeWord> draft_tree_words(const Problem& problem) {
  const ProblemShape& s = problem.shape;
  if (mask_from_name(s.mask) != MaskKind::kTree) return {};
  const std::vector<int> tokens = sequence_q_lens(s);
  std::vector<TreeWord> words;
  words.reserve(static_cast<size_t>(total_query_tokens(s)));
  for (int b = 0; b < s.batch; ++b) {
    if (tokens[b] == 0) continue;
    const std::vector<TreeWord> tree = draft_tree(tokens[b], std::min(s.tree_depth, tokens[b]),
                                                  problem.seed * 0x9e3779b97f4a7c15ull + b);
    words.insert(words.end(), tree.begin(), tree.end());
  }
  return words;
}

}  // namespace mha
