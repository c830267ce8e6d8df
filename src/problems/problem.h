// Problems: what one decode step computes (shape, lengths, mask, sink, partitions) and how it is
// written down: inline specs ("keys=4097,partitions=8"), JSON problem files, built-in suites.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/split_plan.h"
#include "common/result_row.h"
#include "registry/kernel_registry.h"

namespace mha {

// A fully specified problem, ready to generate data for and to run a kernel on.
struct Problem {
  ProblemShape shape;
  std::vector<int> lengths;      // one per sequence (size == shape.batch)
  std::vector<int> partitions;   // runtime split-K counts to run; negative: a split plan
  bool partitions_auto = false;  // add the partition rule's choice
  float q_std = 1.f;             // stddev of q (large values give large-magnitude scores)
  float sink_mean = 0.f;         // sink logits ~ N(sink_mean, 1) in score units
  float scale = 0.f;             // 0: 1/sqrt(depth)
  uint64_t seed = 1;

  int group() const { return shape.heads / shape.kv_heads; }
  int max_length() const;
  float effective_scale() const;
};

// A problem with only some fields given; the rest come from each kernel's family (so one
// spec applies to every selected kernel). Fields are strings as written, checked on use.
struct ProblemSpec {
  std::string origin;  // "--problem" or "file.json: problems[3]" for error messages
  std::optional<std::string> name;
  std::optional<int> batch, heads, kv_heads, depth, page_size, window, chunk, tree_depth;
  std::optional<std::string> dtype, out_dtype, kv_dtype, kv_scale, kv, mask;
  std::optional<float> soft_cap;
  std::optional<bool> sink;
  std::vector<int> keys;           // several lengths: one problem each
  std::vector<int> q_len;          // query tokens per sequence, several: one problem each
  std::vector<int> q_lens;         // a ragged step's tokens, one count (0 ..) per sequence
  std::vector<int> lengths;        // explicit ragged lengths (batch = size)
  std::optional<std::string> mix;  // a seeded length mix (length_mix.h), one per keys value
  std::optional<int> mix_seed;
  std::vector<int> partitions;
  bool partitions_auto = false;
  bool partitions_plan = false;         // "plan": a balanced split plan per knob combination
  std::vector<int> plan_blocks_per_sm;  // the plan's knobs (split_plan.h); empty: its default
  std::vector<int> plan_min_chunk;
  std::optional<float> q_std, sink_mean, scale;
};

// The spec's partition counts followed by its split plans (encoded, split_plan.h); empty when
// it names neither.
std::vector<int> spec_partitions(const ProblemSpec& spec);

// Parses "key=value,key=value" (lists separated by ':'); throws UsageError naming the key.
ProblemSpec parse_problem_spec(const std::string& text);
// Reads {"problems": [ {...}, ... ]} (or a config's "suite" object); throws UsageError naming
// the file and key.
std::vector<ProblemSpec> read_problem_file(const std::string& path);
std::vector<ProblemSpec> problem_specs_from_json(const std::string& origin, const void* json_ptr);
// The specs of verify's and sweep's --problem texts, in order, then those of --problems FILE
// (when `problems_file` is not empty).
std::vector<ProblemSpec> collect_problem_specs(const std::vector<std::string>& inline_specs,
                                               const std::string& problems_file);

// The problems a spec gives for one kernel; `why_not` says why none (family mismatch).
std::vector<Problem> instantiate(const ProblemSpec& spec, const KernelTraits& traits,
                                 std::string* why_not);

// Built-in suites: "basic" (verify's default) and "edge" (docs/design.md's edge cases), per kernel.
std::vector<Problem> builtin_suite(const std::string& suite, const KernelTraits& traits);

// Stable identity of a problem in reports: every field that changes what is computed.
std::string problem_name(const Problem& p);

// Bytes one decode step must move: visible K/V rows, q, the output and, with partitions > 1,
// the partials written and read back by the reduce.
double step_bytes(const Problem& p, int partitions);
// Gemma-2's attention soft cap: what the built-in suites give soft-capping kernels.
constexpr float kDefaultSoftCap = 50.f;

// Upper bounds that catch typos and hostile values before any buffer is sized, in specs and in the
// reports read back: 16M keys is beyond any model's context; counts (batch, heads) past 65536 fit
// no GPU at decode shapes.
constexpr long long kMaxProblemKeys = 1 << 24;
constexpr int kMaxProblemCount = 1 << 16;

// The K and V bytes of the keys the masks leave visible (at the cache's element size): what the
// floor reads.
double visible_kv_bytes(const Problem& p);
// Each sequence's visible key range under the problem's mask (the one copy of that formula on
// the host: bytes, the floor and split plans use it).
std::vector<VisibleRange> visible_ranges(const Problem& p);
// step_bytes for a split that writes `partial_rows_per_head` partial rows per query head in all
// (a plan's; step_bytes passes batch x partitions).
double step_bytes_with_partials(const Problem& p, long long partial_rows_per_head);

// Each sequence's query tokens (the ragged counts, else q_len each), their total over the step and
// where each sequence's start among them (cu_seqlens_q: batch + 1 offsets, the first 0).
std::vector<int> sequence_q_lens(const ProblemShape& s);
long long total_query_tokens(const ProblemShape& s);
std::vector<int> query_token_starts(const ProblemShape& s);

// Does this kernel compute this problem's family (dtype, depth, group, kv, mask, sink, one query
// token or several)?
bool kernel_matches(const KernelTraits& t, const ProblemShape& s, std::string* why_not);

}  // namespace mha
