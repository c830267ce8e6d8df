// Host tests for the KV operands (kernels/kv_operand.cuh): every (b, key, kv_head) maps to a
// distinct, in-bounds row, following the layouts written in decode_params.cuh.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "kernels/kv_operand.cuh"

namespace mha {
namespace {

constexpr int kDepth = 64;
const std::vector<int> kLens = {1, 37, 100, 16, 45};  // none a multiple of 7; some not of 16

// Both page orders: NHD ([page_size][kv_heads][depth] a page) and HND
// ([kv_heads][page_size][depth]).
long long expected_offset(bool hnd, int page, int page_size, int key, int kv_heads, int h) {
  const long long slot = key % page_size;
  if (hnd) return ((static_cast<long long>(page) * kv_heads + h) * page_size + slot) * kDepth;
  return ((static_cast<long long>(page) * page_size + slot) * kv_heads + h) * kDepth;
}

TEST(Paging, PagedRowsAreDistinctInBoundsAndFollowThePageTable) {
  for (bool hnd : {false, true})
    for (int page_size : {1, 7, 16}) {
      const int batch = static_cast<int>(kLens.size()), kv_heads = 3;
      const int max_len = *std::max_element(kLens.begin(), kLens.end());
      const int max_pages = (max_len + page_size - 1) / page_size;
      int num_pages = 0;
      for (int n : kLens) num_pages += (n + page_size - 1) / page_size;
      num_pages += 2;  // spare pages nobody uses
      std::vector<int> physical(num_pages);
      std::iota(physical.begin(), physical.end(), 0);
      std::shuffle(physical.begin(), physical.end(), std::mt19937(page_size));
      std::vector<int> table(size_t(batch) * max_pages, -1);
      int next = 0;
      for (int b = 0; b < batch; ++b)
        for (int i = 0; i < (kLens[b] + page_size - 1) / page_size; ++i)
          table[size_t(b) * max_pages + i] = physical[next++];

      DecodeParams p;
      p.batch = batch;
      p.kv_heads = kv_heads;
      set_page_size(p, page_size);
      p.max_pages_per_seq = max_pages;
      p.page_table = table.data();
      if (hnd)  // the packed layout, as the launcher fills it
        PagedHndKv::fill_strides(p, kDepth);
      else
        PagedKv::fill_strides(p, kDepth);
      const long long total = (long long)num_pages * page_size * kv_heads * kDepth;
      std::set<long long> seen;
      for (int b = 0; b < batch; ++b)
        for (int key = 0; key < kLens[b]; ++key)
          for (int h = 0; h < kv_heads; ++h) {
            const long long off = hnd ? PagedHndKv::row_offset(p, b, key, h, kDepth)
                                      : PagedKv::row_offset(p, b, key, h, kDepth);
            const int page = table[size_t(b) * max_pages + key / page_size];
            const long long expect = expected_offset(hnd, page, page_size, key, kv_heads, h);
            ASSERT_EQ(off, expect)
                << "hnd=" << hnd << " page_size=" << page_size << " b=" << b << " key=" << key;
            ASSERT_GE(off, 0);
            ASSERT_LE(off + kDepth, total);
            ASSERT_EQ(off % kDepth, 0);
            ASSERT_TRUE(seen.insert(off).second) << "row reused: b=" << b << " key=" << key;
          }
    }
}

// page_row_offset composes page · page_stride + in_page · row_stride + head_offset from int
// strides (the decode kernel adds the same terms in bytes): it must equal the written layout of
// each order in 64 bits, at page numbers whose product needs them, and the in-page part must
// stay below a page.
template <class Kv>
void expect_strides_compose(bool hnd) {
  for (int page_size : {1, 7, 16, 128})
    for (int kv_heads : {1, 3, 8})
      for (int depth : {64, 128, 256}) {
        DecodeParams p;
        p.kv_heads = kv_heads;
        set_page_size(p, page_size);
        Kv::fill_strides(p, depth);  // the packed layout, as the launcher fills it
        for (int page : {0, 1, 5, 1 << 20, (1 << 30) + 3})
          for (int in_page : {0, page_size / 2, page_size - 1})
            for (int h = 0; h < kv_heads; ++h) {
              const long long layout =
                  hnd ? ((static_cast<long long>(page) * kv_heads + h) * page_size + in_page) *
                            depth
                      : ((static_cast<long long>(page) * page_size + in_page) * kv_heads + h) *
                            depth;
              ASSERT_EQ(Kv::page_row_offset(p, page, in_page, h, depth), layout)
                  << "hnd=" << hnd << " page_size=" << page_size << " kv_heads=" << kv_heads
                  << " depth=" << depth << " page=" << page << " in_page=" << in_page << " h=" << h;
              ASSERT_LT(in_page * Kv::row_stride(p, depth) + Kv::head_offset(p, h, depth),
                        Kv::page_stride(p, depth));
            }
      }
}

TEST(Paging, OffsetsComposeFromPageRowAndHeadStrides) {
  expect_strides_compose<PagedKv>(false);
  expect_strides_compose<PagedHndKv>(true);
}

// The paged address divides by the page size with a multiply-high and a shift: it must equal the
// integer division for every divisor a page can have and every key index up to 2^31 - 1.
TEST(Paging, FastDivisorEqualsIntegerDivision) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> any_key(0, 0x7fffffff);
  for (int d = 1; d <= 4096; ++d) {
    const FastDivisor f = make_fast_divisor(d);
    for (int n : {0, 1, d - 1, d, d + 1, 2 * d - 1, 65535, 131071, 0x7fffffff, any_key(rng),
                  any_key(rng)}) {
      if (n < 0) continue;
      ASSERT_EQ(fast_div(static_cast<unsigned>(n), f), static_cast<unsigned>(n / d))
          << "n=" << n << " d=" << d;
    }
  }
}

TEST(Paging, ContiguousRowsAreDistinctInBoundsAndFollowTheLayout) {
  const int batch = static_cast<int>(kLens.size()), kv_heads = 3, max_keys = 101;
  DecodeParams p;
  p.batch = batch;
  p.kv_heads = kv_heads;
  p.max_keys = max_keys;
  ContiguousKv::fill_strides(p, kDepth);
  const long long total = (long long)batch * max_keys * kv_heads * kDepth;
  std::set<long long> seen;
  for (int b = 0; b < batch; ++b)
    for (int key = 0; key < kLens[b]; ++key)
      for (int h = 0; h < kv_heads; ++h) {
        const long long off = ContiguousKv::row_offset(p, b, key, h, kDepth);
        ASSERT_EQ(off, ((static_cast<long long>(b) * max_keys + key) * kv_heads + h) * kDepth);
        ASSERT_GE(off, 0);
        ASSERT_LE(off + kDepth, total);
        ASSERT_TRUE(seen.insert(off).second);
      }
}

}  // namespace
}  // namespace mha
