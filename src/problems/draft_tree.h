// The draft trees of a tree-mask problem: each sequence's q_len draft tokens as a tree, in the
// bit-packed layout the kernels read (masks.cuh TreeWord, one word per token).
#pragma once

#include <vector>

#include "kernels/masks.cuh"
#include "problems/problem.h"

namespace mha {

// Words of one tree of `q_len` tokens and depth `depth` (1..q_len), drawn from `seed`: tokens
// 0 .. depth - 1 are a chain from the root (the path the draft model likes best), every later
// token hangs under a random earlier one less deep than `depth`. A token's word names itself
// and its ancestors; parents precede children, so every token sees only earlier drafts.
// Depth 1 makes every token a root of its own (it sees the cache and itself); depth q_len, with
// no tokens left over, is the causal mask.
std::vector<TreeWord> draft_tree(int q_len, int depth, unsigned long long seed);

// [batch][q_len] words of a tree-mask problem, one seeded tree per sequence (a ragged step's
// packed, each sequence's tree of its own tokens, no deeper than them); empty under every other
// mask.
std::vector<TreeWord> draft_tree_words(const Problem& problem);

}  // namespace mha
