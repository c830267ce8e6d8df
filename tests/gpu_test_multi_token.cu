// GPU tests of the multi-token kernels (several query tokens per sequence, kernels/block_rows.cuh)
// against the fp32 device reference (kernels/reference_kernel.cuh), which tests each key with the
// contract's key_visible: both MMA orientations, both softmax paths, contiguous and paged caches,
// every mask, a sink, q_len 1..8 over a ragged batch (empty sequences, q_len past the length),
// uniform and ragged token counts (cu_seqlens_q: some sequences with none, some with q_len), and
// every split mode (separate reduce, fused, cluster), each step run twice so that the fused
// reduce's counters must be back at zero. A single-token instance checks the same harness.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gpu/device_buffer.h"
#include "kernels/decode_launch.cuh"
#include "kernels/reference_kernel.cuh"
#include "tests/gpu_test_support.h"

namespace mha {
namespace {

using bf16 = __nv_bfloat16;

// A device copy of `host`, and `count` T read back.
template <typename T>
DeviceBuffer upload(const std::vector<T>& host) {
  DeviceBuffer buffer(std::max<size_t>(host.size(), 1) * sizeof(T));
  EXPECT_EQ(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return buffer;
}
template <typename T>
std::vector<T> download(const DeviceBuffer& buffer, size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), buffer.get(), count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}
template <typename T>
DeviceBuffer allocate(size_t count) {
  return DeviceBuffer(std::max<size_t>(count, 1) * sizeof(T));
}

enum class SplitMode { kReduce, kFused, kCluster };

constexpr int kKvHeads = 2, kMaxLen = 1504, kPageSize = 16;
const std::vector<int> kLengths = {0, 1, 3, 17, 200, 1500, 77};

// Each sequence's tokens: q_len each, or ragged counts of at most q_len (one sequence in three
// none, one in three q_len, the others half as many).
std::vector<int> token_counts(int q_len, bool ragged) {
  std::vector<int> counts(kLengths.size(), q_len);
  if (ragged)
    for (size_t b = 0; b < counts.size(); ++b)
      counts[b] = b % 3 == 1 ? 0 : b % 3 == 0 ? q_len : (q_len + 1) / 2;
  return counts;
}

// One step of instance T (q_len tokens, `parts` fixed partitions) against the reference; returns
// the number of output elements and LSE values outside the tolerance.
template <class T>
int mismatches(int q_len, int parts, SplitMode mode, bool ragged) {
  constexpr int kGroup = T::kGroup, kDepth = T::kDepth;
  constexpr bool kPaged = T::KvOperand::kHasLookup;
  const int heads = kKvHeads * kGroup, batch = static_cast<int>(kLengths.size());
  const int pages_per_seq = kMaxLen / kPageSize;
  std::mt19937 rng(q_len * 131 + parts * 7 + static_cast<int>(mode) + (ragged ? 1000 : 0));
  std::normal_distribution<float> normal(0.f, 1.f);
  auto random_bf16 = [&](size_t count) {
    std::vector<bf16> v(count);
    for (auto& x : v) x = __float2bfloat16(normal(rng));
    return v;
  };
  // Partials, counters and the reference's scores give every sequence q_len rows; q, the output
  // and the LSE hold the step's tokens (cu_seqlens_q's, packed, for a ragged step).
  const size_t rows = static_cast<size_t>(batch) * q_len * heads;
  const std::vector<int> counts = token_counts(q_len, ragged);
  std::vector<int> starts{0};
  for (int c : counts) starts.push_back(starts.back() + c);
  const size_t token_rows = static_cast<size_t>(starts.back()) * heads;
  const std::vector<bf16> q = random_bf16(token_rows * kDepth);
  const std::vector<bf16> k = random_bf16(static_cast<size_t>(batch) * kMaxLen * kKvHeads * kDepth);
  const std::vector<bf16> v = random_bf16(k.size());
  std::vector<float> sink(heads);
  for (auto& x : sink) x = normal(rng);
  // Paged: the logical cache's pages in a shuffled order, [pages][page_size][kv_heads][depth].
  std::vector<int> table(static_cast<size_t>(batch) * pages_per_seq);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int>(i);
  std::shuffle(table.begin(), table.end(), rng);
  std::vector<bf16> k_pages(k.size()), v_pages(v.size());
  const size_t row_elems = static_cast<size_t>(kKvHeads) * kDepth;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < kMaxLen; ++j) {
      const size_t page = table[b * pages_per_seq + j / kPageSize];
      const size_t from = (static_cast<size_t>(b) * kMaxLen + j) * row_elems;
      const size_t to = (page * kPageSize + j % kPageSize) * row_elems;
      std::copy_n(k.begin() + from, row_elems, k_pages.begin() + to);
      std::copy_n(v.begin() + from, row_elems, v_pages.begin() + to);
    }

  const DeviceBuffer d_q = upload(q), d_k = upload(k), d_v = upload(v), d_k_pages = upload(k_pages),
                     d_v_pages = upload(v_pages), d_out = allocate<bf16>(token_rows * kDepth);
  const DeviceBuffer d_sink = upload(sink), d_ref = allocate<float>(token_rows * kDepth),
                     d_scores = allocate<float>(rows * kMaxLen),
                     d_lse = allocate<float>(token_rows), d_lse_ref = allocate<float>(token_rows),
                     d_partial_out = allocate<float>(rows * parts * kDepth),
                     d_partial_max = allocate<float>(rows * parts),
                     d_partial_sum = allocate<float>(rows * parts);
  const DeviceBuffer d_lens = upload(kLengths), d_table = upload(table),
                     d_counters = allocate<unsigned>(rows), d_starts = upload(starts);
  EXPECT_EQ(cudaMemset(d_out.get(), 0xff, token_rows * kDepth * sizeof(bf16)), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_counters.get(), 0, rows * sizeof(unsigned)), cudaSuccess);

  DecodeParams p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kKvHeads;
  p.max_keys = kMaxLen;
  p.q_len = q_len;
  if (ragged) p.cu_seqlens_q = d_starts.get<int>();
  p.partitions = parts;
  p.window = 37;
  p.chunk = 48;
  p.scale = 1.f / std::sqrt(static_cast<float>(kDepth));
  p.seq_lens = d_lens.get<int>();
  p.sink_logits = d_sink.get<float>();
  p.q = d_q.get();
  p.out = d_out.get();
  p.k_cache = kPaged ? d_k_pages.get() : d_k.get<bf16>();
  p.v_cache = kPaged ? d_v_pages.get() : d_v.get<bf16>();
  if (kPaged) {
    p.page_table = d_table.get<int>();
    p.max_pages_per_seq = pages_per_seq;
    set_page_size(p, kPageSize);
  }
  p.partial_out = d_partial_out.get<float>();
  p.partial_max = d_partial_max.get<float>();
  p.partial_sum = d_partial_sum.get<float>();
  if (mode == SplitMode::kFused) p.split_counters = d_counters.get<unsigned>();
  if (mode == SplitMode::kCluster) p.cluster_combine = true;
  if (mode != SplitMode::kFused) p.lse = d_lse.get<float>();  // the fused reduce writes no LSE
  for (int step = 0; step < 2; ++step) EXPECT_EQ(launch_decode<T>(p, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  DecodeParams r = p;
  r.out = d_ref.get();
  r.lse = d_lse_ref.get<float>();
  reference_attention_kernel<bf16, bf16, float><<<dim3(heads, batch * q_len), kReferenceThreads>>>(
      r, d_k.get<bf16>(), d_v.get<bf16>(), kMaxLen, kDepth, kGroup, T::Mask::kKind, T::kHasSink,
      d_scores.get<float>());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  const std::vector<bf16> out = download<bf16>(d_out, token_rows * kDepth);
  const std::vector<float> ref = download<float>(d_ref, token_rows * kDepth);
  const std::vector<float> lse = download<float>(d_lse, token_rows),
                           lse_ref = download<float>(d_lse_ref, token_rows);
  int bad = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const float o = __bfloat162float(out[i]);
    if (!std::isfinite(o) || std::fabs(o - ref[i]) > 2e-2 + 1e-2 * std::fabs(ref[i])) ++bad;
  }
  if (mode != SplitMode::kFused)
    for (size_t i = 0; i < token_rows; ++i) {
      const bool both_empty = lse[i] == -INFINITY && lse_ref[i] == -INFINITY;
      if (!both_empty && !(std::fabs(lse[i] - lse_ref[i]) <= 1e-2)) ++bad;
    }
  return bad;
}

template <class T>
void expect_every_step_matches(const std::vector<int>& q_lens) {
  MHA_REQUIRE_GPU();
  int steps = 0;
  for (bool ragged : {false, true}) {
    if (ragged && !T::kMultiToken) continue;  // cu_seqlens_q: multi-token instances only
    for (int q_len : q_lens)
      for (int parts : {1, 3, 7})
        for (SplitMode mode : {SplitMode::kReduce, SplitMode::kFused, SplitMode::kCluster}) {
          if (parts == 1 && mode != SplitMode::kReduce) continue;
          EXPECT_EQ(mismatches<T>(q_len, parts, mode, ragged), 0)
              << (ragged ? "ragged " : "") << "q_len " << q_len << ", " << parts
              << " partitions, split mode " << static_cast<int>(mode);
          ++steps;
        }
  }
  std::printf("%d steps checked\n", steps);
  EXPECT_GT(steps, 0);
}

template <class Mask, class Kv, bool kSink, int kGroup, bool kMultiToken, int kBM, int kWM, int kWN,
          int kThreads, int kStages, bool kWarpSplitK>
using Instance =
    DecodeTraits<DecodeFeatures<bf16, bf16, 128, kGroup, Kv, Mask, kSink, bf16, false, kMultiToken>,
                 TileShape<kBM, 64, 32, kWM, kWN, kThreads, kStages, kWarpSplitK>>;

const std::vector<int> kQueryLengths = {1, 2, 3, 4, 8};

TEST(MultiToken, RowsWarpSplitKCausal) {
  expect_every_step_matches<
      Instance<CausalMask, ContiguousKv, false, 4, true, 16, 16, 16, 128, 4, true>>(kQueryLengths);
}
TEST(MultiToken, RowsSharedSoftmaxPagedWindowSink) {
  expect_every_step_matches<
      Instance<SlidingWindowMask, PagedKv, true, 8, true, 16, 16, 16, 128, 3, false>>(
      kQueryLengths);
}
TEST(MultiToken, ColumnsChunked) {
  expect_every_step_matches<
      Instance<ChunkedMask, ContiguousKv, false, 4, true, 16, 8, 16, 128, 3, true>>(kQueryLengths);
}
TEST(MultiToken, ColumnsOneTokenPerBlockPagedCausal) {
  expect_every_step_matches<Instance<CausalMask, PagedKv, false, 8, true, 8, 8, 16, 128, 3, true>>(
      kQueryLengths);
}
TEST(MultiToken, RowsBm64NullSink) {
  expect_every_step_matches<
      Instance<NullMask, ContiguousKv, true, 4, true, 64, 16, 32, 256, 3, false>>(kQueryLengths);
}
TEST(MultiToken, SingleTokenInstanceOnTheSameHarness) {
  expect_every_step_matches<
      Instance<CausalMask, ContiguousKv, false, 4, false, 16, 16, 16, 128, 4, true>>({1});
}
TEST(MultiToken, SingleTokenInstanceRefusesSeveralTokens) {
  MHA_REQUIRE_GPU();
  using Single = Instance<CausalMask, ContiguousKv, false, 4, false, 16, 16, 16, 128, 4, true>;
  DecodeParams p;
  p.batch = 1;
  p.heads = 8;
  p.kv_heads = 2;
  p.q_len = 2;
  EXPECT_EQ(launch_decode<Single>(p, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace mha
