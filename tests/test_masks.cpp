// Host tests for the mask policies (kernels/masks.cuh): each policy's visible_begin must agree
// with the contract's key_visible() key by key, i.e. the visible set is exactly [begin, n).
#include <gtest/gtest.h>

#include <vector>

#include "kernels/masks.cuh"

namespace mha {
namespace {

template <typename Mask>
void expect_contiguous(int n, int window, int chunk) {
  DecodeParams p;
  p.window = window;
  p.chunk = chunk;
  const int begin = Mask::visible_begin(n, p);
  ASSERT_GE(begin, 0);
  ASSERT_LE(begin, n);
  for (int key = 0; key < n; ++key)
    EXPECT_EQ(key_visible(Mask::kKind, key, n, window, chunk), key >= begin)
        << "n=" << n << " window=" << window << " chunk=" << chunk << " key=" << key
        << " begin=" << begin;
  // The new token (the last key) is always visible.
  EXPECT_TRUE(key_visible(Mask::kKind, n - 1, n, window, chunk));
  EXPECT_LT(begin, n);
}

const std::vector<int> kLengths = {1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000};
const std::vector<int> kSizes = {1, 2, 3, 7, 16, 32, 64, 100, 128, 129, 999, 1000, 1001, 4096};

TEST(Masks, NullAndCausalSeeEveryKey) {
  for (int n : kLengths) {
    expect_contiguous<NullMask>(n, 0, 0);
    expect_contiguous<CausalMask>(n, 0, 0);
    for (int key = 0; key < n; ++key)  // causal == null for decode
      EXPECT_EQ(key_visible(MaskKind::kCausal, key, n, 0, 0),
                key_visible(MaskKind::kNull, key, n, 0, 0));
  }
}

TEST(Masks, SlidingWindowMatchesKeyVisible) {
  for (int n : kLengths)
    for (int w : kSizes) expect_contiguous<SlidingWindowMask>(n, w, 0);
  DecodeParams p;
  p.window = 1;
  EXPECT_EQ(SlidingWindowMask::visible_begin(10, p), 9);  // window 1: only the last key
  p.window = 50;
  EXPECT_EQ(SlidingWindowMask::visible_begin(10, p), 0);  // window > n: every key
  p.window = 10;
  EXPECT_EQ(SlidingWindowMask::visible_begin(10, p), 0);  // window == n
}

TEST(Masks, ChunkedMatchesKeyVisible) {
  for (int n : kLengths)
    for (int c : kSizes) expect_contiguous<ChunkedMask>(n, 0, c);
  // n on chunk boundaries: the last key opens a new chunk of its own.
  for (int c : {1, 4, 32, 100}) {
    for (int k = 1; k <= 4; ++k) {
      DecodeParams p;
      p.chunk = c;
      EXPECT_EQ(ChunkedMask::visible_begin(k * c, p), (k - 1) * c) << "c=" << c << " k=" << k;
      EXPECT_EQ(ChunkedMask::visible_begin(k * c + 1, p), k * c) << "c=" << c << " k=" << k;
      expect_contiguous<ChunkedMask>(k * c, 0, c);
      expect_contiguous<ChunkedMask>(k * c + 1, 0, c);
      if (k * c > 1) expect_contiguous<ChunkedMask>(k * c - 1, 0, c);
    }
  }
}

}  // namespace
}  // namespace mha
