// Host tests for the float64 CPU reference (src/verify/reference.h) on cases small enough to
// compute by hand: one key, equal scores, sinks, windows, chunks and the GQA head mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/problem_data.h"
#include "problems/problem.h"
#include "verify/reference.h"

namespace mha {
namespace {

constexpr int kD = 64;

struct Case {
  Problem p;
  HostInputs in;
  // n keys, heads/kv_heads heads, one sequence; q = e0, key j = score_j * sqrt(d) * e0 so that
  // s_j = score_j with the default scale 1/sqrt(d); v of key j, kv head h = (100 h + j + 1) * e_c.
  Case(const std::vector<float>& scores, int heads = 1, int kv_heads = 1) {
    const int n = static_cast<int>(scores.size());
    p.shape.batch = 1;
    p.shape.heads = heads;
    p.shape.kv_heads = kv_heads;
    p.shape.depth = kD;
    p.shape.keys = n;
    p.lengths = {n};
    in.lengths = {n};
    in.max_len = n;
    in.q.assign(size_t(heads) * kD, 0.f);
    for (int h = 0; h < heads; ++h) in.q[size_t(h) * kD] = 1.f;
    in.k.assign(size_t(n) * kv_heads * kD, 0.f);
    in.v.assign(in.k.size(), 0.f);
    for (int j = 0; j < n; ++j)
      for (int h = 0; h < kv_heads; ++h) {
        in.k[(size_t(j) * kv_heads + h) * kD] = scores[j] * std::sqrt(float(kD));
        for (int c = 0; c < kD; ++c) in.v[(size_t(j) * kv_heads + h) * kD + c] = v(j, h, c);
      }
  }
  static float v(int j, int h, int c) { return float(100 * h + j + 1) * (c % 2 ? -1.f : 1.f); }
  std::vector<double> run() { return cpu_reference(p, in); }
};

// Expects head `head`'s output column c to equal sum_j weight_j * v(j, kv_head, c).
void expect_mix(const std::vector<double>& out, int head, int kv_head,
                const std::vector<double>& weights) {
  for (int c = 0; c < kD; ++c) {
    double want = 0;
    for (size_t j = 0; j < weights.size(); ++j) want += weights[j] * Case::v(int(j), kv_head, c);
    ASSERT_NEAR(out[size_t(head) * kD + c], want, 1e-7 * (1 + std::abs(want))) << "col " << c;
  }
}

TEST(CpuReference, OneKeyGivesItsValue) {
  Case t({3.f});
  expect_mix(t.run(), 0, 0, {1});
}

TEST(CpuReference, EqualScoresGiveTheMean) {
  Case t({0.7f, 0.7f});
  expect_mix(t.run(), 0, 0, {0.5, 0.5});
}

TEST(CpuReference, UnequalScoresFollowSoftmax) {
  Case t({0.f, std::log(3.f)});
  expect_mix(t.run(), 0, 0, {0.25, 0.75});
}

TEST(CpuReference, SoftCapBoundsTheScoresBeforeTheSoftmax) {
  // Scores 0 and 20 under a cap of 2: 2 tanh(0) = 0 and 2 tanh(10) ~ 2, so the second key
  // weighs e^2 tanh(10) against 1 instead of e^20.
  Case t({0.f, 20.f});
  t.p.shape.soft_cap = 2;
  const double w = std::exp(2 * std::tanh(10.0));
  expect_mix(t.run(), 0, 0, {1 / (1 + w), w / (1 + w)});
}

TEST(CpuReference, SinkEqualToTheOnlyScoreHalvesTheValue) {
  Case t({1.5f});
  t.p.shape.has_sink = true;
  t.in.sink_logits = {1.5f};
  expect_mix(t.run(), 0, 0, {0.5});
}

TEST(CpuReference, WindowOfOneGivesTheLastKey) {
  Case t({5.f, 4.f, 0.f});
  t.p.shape.mask = "window";
  t.p.shape.window = 1;
  expect_mix(t.run(), 0, 0, {0, 0, 1});
}

TEST(CpuReference, KeyBeyondTheWindowIsIgnored) {
  Case t({9.f, 0.f, 0.f});  // key 0 would dominate if it were visible
  t.p.shape.mask = "window";
  t.p.shape.window = 2;
  expect_mix(t.run(), 0, 0, {0, 0.5, 0.5});
  t.p.shape.window = 3;  // window == n: key 0 back in
  const double e9 = std::exp(9.0), z = e9 + 2;
  expect_mix(t.run(), 0, 0, {e9 / z, 1 / z, 1 / z});
}

TEST(CpuReference, ChunkedWithLengthOnABoundary) {
  // n = 5, chunk 4: the query (position 4) starts chunk 1 alone.
  Case t({1.f, 1.f, 1.f, 1.f, 2.f});
  t.p.shape.mask = "chunked";
  t.p.shape.chunk = 4;
  expect_mix(t.run(), 0, 0, {0, 0, 0, 0, 1});
  // n = 4, chunk 2: keys 2 and 3 only.
  Case u({7.f, 7.f, 0.f, 0.f});
  u.p.shape.mask = "chunked";
  u.p.shape.chunk = 2;
  expect_mix(u.run(), 0, 0, {0, 0, 0.5, 0.5});
}

TEST(CpuReference, GqaHeadReadsKvHeadOverGroup) {
  // 6 heads, 2 KV heads (group 3): heads 0-2 read KV head 0, heads 3-5 KV head 1.
  Case t({0.f, 0.f}, 6, 2);
  const auto out = t.run();
  for (int h = 0; h < 6; ++h) expect_mix(out, h, h / 3, {0.5, 0.5});
}

TEST(CpuReference, QueryTokensSeeTheKeysUpToTheirPositions) {
  // 3 keys, 2 tokens (at positions 1 and 2), q [token][head]: under the causal mask token 0 sees
  // keys 0..1 and token 1 all three; under the null mask both see all three.
  Case t({0.f, 0.f, 0.f});
  t.p.shape.q_len = 2;
  t.in.q.assign(size_t(2) * kD, 0.f);
  t.in.q[0] = t.in.q[kD] = 1.f;
  t.p.shape.mask = "causal";
  const std::vector<double> causal = t.run();
  ASSERT_EQ(causal.size(), size_t(2) * kD);
  expect_mix(causal, 0, 0, {0.5, 0.5});                // token 0: row 0
  expect_mix(causal, 1, 0, {1 / 3., 1 / 3., 1 / 3.});  // token 1: row 1
  t.p.shape.mask = "null";
  const std::vector<double> null = t.run();
  expect_mix(null, 0, 0, {1 / 3., 1 / 3., 1 / 3.});
  // More tokens than keys: the first tokens see none and give 0.
  t.p.shape.q_len = 5;
  t.p.shape.mask = "causal";
  t.in.q.assign(size_t(5) * kD, 0.f);
  const std::vector<double> past = t.run();
  expect_mix(past, 0, 0, {0, 0, 0});
  expect_mix(past, 1, 0, {0, 0, 0});
  expect_mix(past, 2, 0, {1, 0, 0});
  expect_mix(past, 4, 0, {1 / 3., 1 / 3., 1 / 3.});
}

TEST(CpuReference, TreeTokensSeeTheCacheAndTheDraftsTheirWordsName) {
  // 4 keys of which the last 3 are drafts (q_len 3, drafts at keys 1..3), equal scores: token 0
  // (word 0b001) sees key 0 and itself; token 2 (word 0b101) key 0, draft 0 and itself, not
  // its sibling draft 1.
  Case t({0.f, 0.f, 0.f, 0.f});
  t.p.shape.q_len = 3;
  t.p.shape.mask = "tree";
  t.in.q.assign(size_t(3) * kD, 0.f);
  for (int token = 0; token < 3; ++token) t.in.q[size_t(token) * kD] = 1.f;
  t.in.tree_words = {0b001, 0b011, 0b101};
  const std::vector<double> out = t.run();
  expect_mix(out, 0, 0, {0.5, 0.5, 0, 0});
  expect_mix(out, 1, 0, {1 / 3., 1 / 3., 1 / 3., 0});
  expect_mix(out, 2, 0, {1 / 3., 1 / 3., 0, 1 / 3.});
}

TEST(CpuReference, RaggedTokensSitAtTheirOwnSequencesPositions) {
  // Two sequences of the same 3 keys; the first has 2 tokens (at positions 1, 2), the second 1
  // (position 2); rows token-major over the step's 3 tokens: row 2 is sequence 1's only token.
  Case t({0.f, 0.f, 0.f});
  t.p.shape.batch = 2;
  t.p.lengths = t.in.lengths = {3, 3};
  const std::vector<float> k = t.in.k, v = t.in.v;
  t.in.k.insert(t.in.k.end(), k.begin(), k.end());
  t.in.v.insert(t.in.v.end(), v.begin(), v.end());
  t.p.shape.mask = "causal";
  t.p.shape.q_len = 2;
  t.p.shape.ragged_q_lens = {2, 1};
  t.in.q.assign(size_t(3) * kD, 0.f);
  for (int token = 0; token < 3; ++token) t.in.q[size_t(token) * kD] = 1.f;
  const std::vector<double> out = t.run();
  ASSERT_EQ(out.size(), size_t(3) * kD);
  expect_mix(out, 0, 0, {0.5, 0.5, 0});
  expect_mix(out, 1, 0, {1 / 3., 1 / 3., 1 / 3.});
  expect_mix(out, 2, 0, {1 / 3., 1 / 3., 1 / 3.});  // its one token is the newest
  // A sequence without a token has no row.
  t.p.shape.ragged_q_lens = {0, 1};
  t.in.q.resize(kD);
  const std::vector<double> lone = t.run();
  ASSERT_EQ(lone.size(), size_t(kD));
  expect_mix(lone, 0, 0, {1 / 3., 1 / 3., 1 / 3.});
}

}  // namespace
}  // namespace mha
