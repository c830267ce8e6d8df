// Host tests for the draft trees of tree-mask problems (problems/draft_tree.h): each token sees
// itself and its ancestors, parents precede children, the depth is the one asked for, and one
// seed gives one tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "problems/draft_tree.h"

namespace mha {
namespace {

// A token's depth in its tree: the drafts its word names (itself and its ancestors).
int depth_of(TreeWord word) { return __builtin_popcount(word); }

TEST(DraftTree, EveryTokenSeesItselfAndOnlyEarlierDrafts) {
  for (int q_len : {1, 2, 8, 16})
    for (int depth = 1; depth <= q_len; ++depth) {
      const std::vector<TreeWord> words = draft_tree(q_len, depth, 7);
      ASSERT_EQ(static_cast<int>(words.size()), q_len);
      int deepest = 0;
      for (int t = 0; t < q_len; ++t) {
        EXPECT_TRUE((words[t] >> t) & 1u) << "token " << t << " must see itself";
        EXPECT_EQ(words[t] >> (t + 1), 0u) << "token " << t << " sees a later draft";
        // Its ancestors' words are subsets of its own (a tree, not any set of bits).
        for (int a = 0; a < t; ++a) {
          if ((words[t] >> a) & 1u) {
            EXPECT_EQ(words[a] & ~words[t], 0u) << t << " under " << a;
          }
        }
        deepest = std::max(deepest, depth_of(words[t]));
      }
      EXPECT_EQ(deepest, depth) << "q_len " << q_len;
    }
}

TEST(DraftTree, DepthOneIsAllRootsAndFullDepthIsCausal) {
  const std::vector<TreeWord> roots = draft_tree(8, 1, 3), chain = draft_tree(8, 8, 3);
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(roots[t], TreeWord{1} << t);
    EXPECT_EQ(chain[t], (TreeWord{2} << t) - 1);  // tokens 0..t
  }
}

// A tree-mask problem of three sequences of 8 draft tokens, trees of depth 3.
Problem three_trees() {
  Problem p;
  p.shape.mask = "tree";
  p.shape.batch = 3;
  p.shape.q_len = 8;
  p.shape.tree_depth = 3;
  return p;
}

TEST(DraftTree, OneTreePerSequenceFromTheProblemsSeed) {
  Problem p = three_trees();
  const std::vector<TreeWord> words = draft_tree_words(p);
  ASSERT_EQ(words.size(), 24u);
  EXPECT_EQ(words, draft_tree_words(p));  // seeded: the same problem, the same trees
  p.seed = 2;
  EXPECT_NE(words, draft_tree_words(p));
  p.shape.mask = "causal";
  EXPECT_TRUE(draft_tree_words(p).empty());
}

TEST(DraftTree, RaggedStepsPackEachSequencesTreeOfItsOwnTokens) {
  Problem p = three_trees();
  const std::vector<TreeWord> uniform = draft_tree_words(p);
  p.shape.ragged_q_lens = {8, 0, 2};
  const std::vector<TreeWord> words = draft_tree_words(p);
  ASSERT_EQ(words.size(), 10u);  // [tokens]: sequence 1 has none
  // Sequence 0 draws the tree it draws in the uniform step; sequence 2's two tokens, no deeper
  // than them, are a chain from the same seed's root.
  EXPECT_EQ(std::vector<TreeWord>(words.begin(), words.begin() + 8),
            std::vector<TreeWord>(uniform.begin(), uniform.begin() + 8));
  EXPECT_EQ(words[8], 0b01u);
  EXPECT_EQ(words[9], 0b11u);
}

}  // namespace
}  // namespace mha
