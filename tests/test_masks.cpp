// Host tests for the mask policies (kernels/masks.cuh): for every token of a step, the policy's
// range [begin_at(pos), token_end) must agree with the contract's key_visible() key by key, and
// visible_begin must be the first key any token sees.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/masks.cuh"

namespace mha {
namespace {

template <typename Mask>
void expect_contiguous(int n, int window, int chunk, int q_len = 1) {
  DecodeParams p;
  p.window = window;
  p.chunk = chunk;
  p.q_len = q_len;
  const int step_begin = visible_begin<Mask>(n, p);
  ASSERT_GE(step_begin, 0);
  int first_seen = n;  // the first key any token sees
  for (int token = 0; token < q_len; ++token) {
    const int pos = n - q_len + token;
    const int begin = Mask::begin_at(pos, window, chunk);
    const int end = token_end<Mask>(n, q_len, token);
    ASSERT_GE(begin, 0);
    for (int key = 0; key < n; ++key) {
      const bool visible = key_visible(Mask::kKind, key, n, window, chunk, q_len, token);
      EXPECT_EQ(visible, key >= begin && key < end)
          << "n=" << n << " q_len=" << q_len << " token=" << token << " window=" << window
          << " chunk=" << chunk << " key=" << key << " range=[" << begin << ", " << end << ")";
      if (visible) first_seen = std::min(first_seen, key);
    }
    // A token inside the sequence sees its own position.
    if (pos >= 0) {
      EXPECT_TRUE(key_visible(Mask::kKind, pos, n, window, chunk, q_len, token));
    }
  }
  // Every token's keys lie at or past the step's begin, and the begin is the first one seen.
  if (first_seen < n) {
    EXPECT_EQ(step_begin, first_seen) << "n=" << n << " q_len=" << q_len;
  }
}

const std::vector<int> kLengths = {1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000};
const std::vector<int> kSizes = {1, 2, 3, 7, 16, 32, 64, 100, 128, 129, 999, 1000, 1001, 4096};
const std::vector<int> kQueryLengths = {1, 2, 3, 4, 8, 9};

TEST(Masks, NullAndCausalSeeEveryKeyForOneToken) {
  for (int n : kLengths) {
    expect_contiguous<NullMask>(n, 0, 0);
    expect_contiguous<CausalMask>(n, 0, 0);
    for (int key = 0; key < n; ++key)  // causal == null for single-token decode
      EXPECT_EQ(key_visible(MaskKind::kCausal, key, n, 0, 0),
                key_visible(MaskKind::kNull, key, n, 0, 0));
  }
}

TEST(Masks, SlidingWindowMatchesKeyVisible) {
  for (int n : kLengths)
    for (int w : kSizes) expect_contiguous<SlidingWindowMask>(n, w, 0);
  DecodeParams p;
  p.window = 1;
  EXPECT_EQ(visible_begin<SlidingWindowMask>(10, p), 9);  // window 1: only the last key
  p.window = 50;
  EXPECT_EQ(visible_begin<SlidingWindowMask>(10, p), 0);  // window > n: every key
  p.window = 10;
  EXPECT_EQ(visible_begin<SlidingWindowMask>(10, p), 0);  // window == n
}

TEST(Masks, ChunkedMatchesKeyVisible) {
  for (int n : kLengths)
    for (int c : kSizes) expect_contiguous<ChunkedMask>(n, 0, c);
  // n on chunk boundaries: the last key opens a new chunk of its own.
  for (int c : {1, 4, 32, 100}) {
    for (int k = 1; k <= 4; ++k) {
      DecodeParams p;
      p.chunk = c;
      EXPECT_EQ(visible_begin<ChunkedMask>(k * c, p), (k - 1) * c) << "c=" << c << " k=" << k;
      EXPECT_EQ(visible_begin<ChunkedMask>(k * c + 1, p), k * c) << "c=" << c << " k=" << k;
      expect_contiguous<ChunkedMask>(k * c, 0, c);
      expect_contiguous<ChunkedMask>(k * c + 1, 0, c);
      if (k * c > 1) expect_contiguous<ChunkedMask>(k * c - 1, 0, c);
    }
  }
}

// Several query tokens: token t sits at n - q_len + t and sees keys up to there (causal-type
// masks), all n keys (null); q_len past n leaves the first tokens without a key.
TEST(Masks, EveryTokenOfAStepMatchesKeyVisible) {
  for (int q_len : kQueryLengths)
    for (int n : kLengths) {
      expect_contiguous<NullMask>(n, 0, 0, q_len);
      expect_contiguous<CausalMask>(n, 0, 0, q_len);
      for (int w : {1, 2, 3, 7, 64, 1001}) expect_contiguous<SlidingWindowMask>(n, w, 0, q_len);
      for (int c : {1, 3, 4, 32, 100}) expect_contiguous<ChunkedMask>(n, 0, c, q_len);
    }
}

TEST(Masks, TokensBeforeTheFirstKeySeeNothing) {
  // q_len 8 over 3 keys: tokens 0..4 sit before key 0, token 5 sees key 0, token 7 keys 0..2.
  for (int token = 0; token < 5; ++token) {
    EXPECT_EQ(token_end<CausalMask>(3, 8, token), 3 - 8 + token + 1);
    for (int key = 0; key < 3; ++key)
      EXPECT_FALSE(key_visible(MaskKind::kCausal, key, 3, 0, 0, 8, token)) << token;
  }
  EXPECT_TRUE(key_visible(MaskKind::kCausal, 0, 3, 0, 0, 8, 5));
  EXPECT_FALSE(key_visible(MaskKind::kCausal, 1, 3, 0, 0, 8, 5));
  EXPECT_EQ(token_end<CausalMask>(3, 8, 7), 3);
  EXPECT_EQ(token_end<NullMask>(3, 8, 0), 3);  // null: every token sees all keys
}

TEST(Masks, WindowShorterThanTheStep) {
  // window 3, q_len 8, 100 keys: token t at 92 + t sees keys 90 + t .. 92 + t; the step reads
  // from key 90.
  DecodeParams p;
  p.window = 3;
  p.q_len = 8;
  EXPECT_EQ(visible_begin<SlidingWindowMask>(100, p), 90);
  for (int token = 0; token < 8; ++token) {
    EXPECT_EQ(SlidingWindowMask::begin_at(92 + token, 3, 0), 90 + token);
    EXPECT_EQ(token_end<SlidingWindowMask>(100, 8, token), 93 + token);
  }
}

TEST(Masks, TreeTokensSeeTheCacheAndTheDraftsTheirWordNames) {
  // 4 drafts over 10 keys (drafts at keys 6..9): token 2's word 0b101 names draft 0 and itself.
  const TreeWord word = 0b101;
  for (int key = 0; key < 6; ++key)
    EXPECT_TRUE(key_visible(MaskKind::kTree, key, 10, 0, 0, 4, 2, word));
  EXPECT_TRUE(key_visible(MaskKind::kTree, 6, 10, 0, 0, 4, 2, word));
  EXPECT_FALSE(key_visible(MaskKind::kTree, 7, 10, 0, 0, 4, 2, word));
  EXPECT_TRUE(key_visible(MaskKind::kTree, 8, 10, 0, 0, 4, 2, word));
  EXPECT_FALSE(key_visible(MaskKind::kTree, 9, 10, 0, 0, 4, 2, word));
  EXPECT_FALSE(key_visible(MaskKind::kTree, 10, 10, 0, 0, 4, 2, word));  // past the keys
  // More drafts than keys: 4 drafts over 2 keys hold drafts 2 and 3 only.
  EXPECT_TRUE(tree_sees(0b1100, 0, 2, 4));
  EXPECT_FALSE(tree_sees(0b0100, 1, 2, 4));
}

}  // namespace
}  // namespace mha
