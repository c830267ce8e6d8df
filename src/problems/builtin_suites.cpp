// Built-in verification suites, derived from each kernel's tile shape: "basic" (verify's
// default) and "edge" (lengths around BN, primes, partitions beyond the key tiles, extreme
// windows, chunks and sinks, large scores, ragged batches, odd page sizes), each with fixed
// partition counts and split plans. Multi-token kernels run them at 4 query tokens, and at the
// query lengths that stress their rows (one, more than a block's spare rows, more than the keys)
// and on ragged token counts (none, one, past the keys); tree-mask ones also on trees of every
// depth to 8 tokens, and of 16.
#include <fmt/format.h>

#include <algorithm>

#include "common/errors.h"
#include "common/kinds.h"
#include "problems/problem.h"

namespace mha {
namespace {

struct SuiteBuilder {
  const KernelTraits& t;
  std::vector<Problem> problems;

  Problem base(int batch, int keys) const {
    Problem p;
    ProblemShape& s = p.shape;
    s.dtype = t.dtype;
    s.out_dtype = t.out_dtype;
    s.kv_dtype = cache_dtype(t);
    if (is_fp8(s.kv_dtype)) s.kv_scale = "tensor";
    s.soft_cap = t.soft_cap ? kDefaultSoftCap : 0;
    s.depth = t.depth;
    s.kv = t.kv;
    s.mask = t.mask;
    s.has_sink = t.has_sink;
    s.kv_heads = 2;
    s.heads = 2 * t.group;
    s.page_size = is_paged(t.kv) ? 16 : 0;
    s.window = mask_from_name(t.mask) == MaskKind::kWindow ? 128 : 0;
    s.chunk = mask_from_name(t.mask) == MaskKind::kChunked ? 256 : 0;
    s.tree_depth = mask_from_name(t.mask) == MaskKind::kTree ? 2 : 0;
    s.batch = batch;
    s.keys = keys;
    s.q_len = t.multi_token ? kMultiTokenSuiteQueryLength : 1;
    p.lengths.assign(batch, keys);
    return p;
  }
  // A multi-token kernel's suites run at this many tokens unless a case says otherwise.
  static constexpr int kMultiTokenSuiteQueryLength = 4;
  int tiles(int n) const { return (n + t.bn - 1) / t.bn; }
  // Every problem also runs two split plans: the smallest chunks the plan allows (many
  // partials per sequence, windows shorter than a chunk) and a default-like one.
  void add(Problem p, std::vector<int> partitions) {
    if (mask_from_name(p.shape.mask) == MaskKind::kTree)  // as deep as asked, at most its tokens
      p.shape.tree_depth = std::clamp(p.shape.tree_depth, 1, p.shape.q_len);
    partitions.push_back(encode_split_plan({1, 1}));
    partitions.push_back(encode_split_plan({2, 256}));
    std::sort(partitions.begin(), partitions.end());
    partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
    p.partitions = partitions;
    p.shape.keys = p.max_length();
    p.shape.name = problem_name(p);
    problems.push_back(p);
  }
  void add_query_lengths(const std::vector<int>& q_lens, const std::vector<int>& lengths,
                         const std::vector<int>& partitions) {
    for (int q_len : q_lens)
      for (int n : lengths) {
        Problem p = base(2, n);
        p.shape.q_len = q_len;
        add(p, partitions);
      }
  }
  void add_lengths(const std::vector<int>& lengths, const std::vector<int>& partitions) {
    for (int n : lengths) {
      std::vector<int> parts = partitions;
      parts.push_back(tiles(n) + 3);  // more partitions than key tiles: some are empty
      add(base(2, n), parts);
    }
  }
};

}  // namespace

std::vector<Problem> builtin_suite(const std::string& suite, const KernelTraits& t) {
  SuiteBuilder b{t, {}};
  const int bn = t.bn;
  if (suite == "basic") {
    b.add_lengths({1, 37, bn + 1, 1000, 4097}, {1, 3, 8});
    if (t.multi_token) b.add_query_lengths({2, 8}, {37, 1000}, {1, 3});
    return b.problems;
  }
  if (suite != "edge")
    throw UsageError(fmt::format("--suite: unknown suite '{}' (known: basic, edge)", suite));

  b.add_lengths({1, 2, bn - 1, bn, bn + 1, 2 * bn + 1, 97, 1009, 4099}, {1, 2, 5});
  // Large-magnitude scores: partition maxima far apart (catches exp/exp2 mix-ups in the reduce).
  for (int n : {300, 4099}) {
    Problem p = b.base(1, n);
    p.q_std = 8.f;
    b.add(p, {1, 4, 7, 16});
  }
  // Ragged batch: every sequence its own length and its own visible range.
  {
    Problem p = b.base(4, 0);
    p.lengths = {1, bn + 3, 777, 2 * bn};
    p.shape.lengths = fmt::format("ragged1-{}-777-{}", bn + 3, 2 * bn);
    b.add(p, {1, 4});
  }
  // One long sequence among short ones: the plan cuts it into many chunks, the others keep one
  // and write their output directly.
  {
    Problem p = b.base(6, 0);
    p.lengths = {1, 5000, 3, bn, 2 * bn + 1, 1};
    p.shape.lengths = fmt::format("ragged1-5000-3-{}-{}-1", bn, 2 * bn + 1);
    b.add(p, {1, 8});
  }
  if (mask_from_name(t.mask) == MaskKind::kWindow) {
    for (auto [n, w] : std::vector<std::pair<int, int>>{
             {1000, 1}, {500, 600}, {1000, bn}, {4099, 1000}, {1, 1}}) {
      Problem p = b.base(2, n);
      p.shape.window = w;
      b.add(p, {1, 3, b.tiles(n) + 2});
    }
  }
  if (mask_from_name(t.mask) == MaskKind::kChunked) {
    for (auto [n, c] : std::vector<std::pair<int, int>>{
             {3 * bn, bn}, {3 * bn + 1, bn}, {1000, 100}, {500, 4096}, {257, 1}}) {
      Problem p = b.base(2, n);
      p.shape.chunk = c;
      b.add(p, {1, 3, b.tiles(n) + 2});
    }
  }
  if (t.has_sink) {
    for (float sink : {30.f, -30.f, 3.f}) {
      for (int n : {1, 2 * bn + 5, 1500}) {
        Problem p = b.base(2, n);
        p.sink_mean = sink;
        b.add(p, {1, 4, b.tiles(n) + 2});
      }
    }
  }
  if (b.base(1, 1).shape.kv_scale == "tensor") {  // fp8: a scale per KV head (heads differ 8x)
    for (int n : {37, 1000}) {
      Problem p = b.base(2, n);
      p.shape.kv_scale = "head";
      b.add(p, {1, 3});
    }
  }
  if (t.soft_cap) {  // caps that bite: scores of q_std 8 reach far past a cap of 5
    for (float cap : {5.f, 30.f}) {
      Problem p = b.base(2, 1000);
      p.q_std = 8.f;
      p.shape.soft_cap = cap;
      b.add(p, {1, 4});
    }
  }
  if (t.multi_token) {
    // Two tokens; the tokens of one KV head past a block's rows (several row blocks, the last
    // partly padding); more tokens than keys (the first ones see none).
    const int past_block = std::min(kMaxQueryTokens, std::max(2, t.bm / t.group + 1));
    b.add_query_lengths({2, past_block, 8}, {1, 3, bn + 1, 1009}, {1, 2, 5});
    if (mask_from_name(t.mask) == MaskKind::kWindow) {  // windows shorter than the tokens
      for (int w : {1, 3}) {
        Problem p = b.base(2, 1000);
        p.shape.q_len = 8;
        p.shape.window = w;
        b.add(p, {1, 3});
      }
    }
    if (mask_from_name(t.mask) == MaskKind::kTree) {  // trees of every depth, and of 16 tokens
      for (auto [q_len, depth] : std::vector<std::pair<int, int>>{
               {8, 1}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 6}, {8, 7}, {8, 8}, {16, 5}}) {
        Problem p = b.base(2, 1000);
        p.shape.q_len = q_len;
        p.shape.tree_depth = depth;
        b.add(p, {1, 3});
      }
    }
    Problem ragged = b.base(4, 0);  // tokens past some sequences' lengths, not others'
    ragged.shape.q_len = 8;
    ragged.lengths = {1, bn + 3, 5, 777};
    ragged.shape.lengths = fmt::format("ragged1-{}-5-777", bn + 3);
    b.add(ragged, {1, 4});
    // Ragged tokens (cu_seqlens_q): a sequence with none, one of a single token, more tokens than
    // keys, tokens past a block's rows (row blocks of padding only); each sequence's tokens at its
    // own positions. Then a step where one sequence of three has tokens.
    Problem tokens = b.base(5, 0);
    tokens.lengths = {bn + 3, 1, 5, 777, 1009};
    tokens.shape.lengths = fmt::format("ragged{}-1-5-777-1009", bn + 3);
    tokens.shape.ragged_q_lens = {3, 0, 8, 1, past_block};
    tokens.shape.q_len = std::max(8, past_block);
    b.add(tokens, {1, 2, 5});
    Problem lone = b.base(3, 1000);
    lone.shape.ragged_q_lens = {0, 5, 0};
    lone.shape.q_len = 5;
    b.add(lone, {1, 3});
  }
  if (is_paged(t.kv)) {
    for (int page : {1, 7, 48, 128}) {  // 48 and 128: whole 16-row slices (decode_kernel.cuh)
      Problem p = b.base(3, 0);
      p.lengths = {1000, 1, 129};
      p.shape.lengths = "ragged1000-1-129";
      p.shape.page_size = page;
      b.add(p, {1, 3});
    }
  }
  return b.problems;
}

}  // namespace mha
