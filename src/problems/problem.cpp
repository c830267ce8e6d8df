// Problem specs: parsing inline specs and JSON problem files, filling missing fields from a
// kernel's family, stable names.
#include "problems/problem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/fnv1a.h"
#include "common/kinds.h"
#include "kernels/masks.cuh"
#include "problems/json_strict.h"
#include "problems/length_mix.h"
#include "problems/list_syntax.h"

namespace mha {

int Problem::max_length() const {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

float Problem::effective_scale() const {
  return scale > 0.f ? scale : 1.f / std::sqrt(static_cast<float>(shape.depth));
}

namespace {

constexpr long long kMaxKeys = kMaxProblemKeys;
constexpr int kMaxCount = kMaxProblemCount;
constexpr long long kMaxPartitions = 1024;

const std::vector<std::string> kSpecKeys = {
    "name",           "batch",     "heads",    "kv_heads",   "depth",
    "dtype",          "out_dtype", "kv_dtype", "kv_scale",   "kv",
    "page_size",      "mask",      "window",   "chunk",      "sink",
    "soft_cap",       "keys",      "lengths",  "partitions", "q_std",
    "sink_mean",      "scale",     "mix",      "mix_seed",   "plan_blocks_per_sm",
    "plan_min_chunk", "q_len",     "q_lens",   "tree_depth"};

int parse_int(const std::string& origin, const std::string& key, const std::string& v) {
  try {
    // stoll and stof skip leading spaces; "keys= 512" is a typo like "keys=5 12".
    if (v.empty() || std::isspace(static_cast<unsigned char>(v[0]))) throw std::invalid_argument(v);
    size_t used = 0;
    const long long x = std::stoll(v, &used);
    if (used != v.size() || x < INT32_MIN || x > INT32_MAX) throw std::invalid_argument(v);
    return static_cast<int>(x);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("{}: key '{}': '{}' is not an integer", origin, key, v));
  }
}

float parse_float(const std::string& origin, const std::string& key, const std::string& v) {
  try {
    // Decimal only: stof also reads " 1", "0x10" and "nan".
    if (v.empty() || v.find_first_not_of("0123456789+-.eE") != std::string::npos)
      throw std::invalid_argument(v);
    size_t used = 0;
    const float x = std::stof(v, &used);
    if (used != v.size() || !std::isfinite(x)) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception&) {
    throw UsageError(fmt::format("{}: key '{}': '{}' is not a finite number", origin, key, v));
  }
}

// A standard deviation or a softmax scale: negative is a sign error (scale 0 means 1/sqrt(depth)).
float parse_non_negative_float(const std::string& origin, const std::string& key,
                               const std::string& v) {
  const float x = parse_float(origin, key, v);
  if (x < 0)
    throw UsageError(fmt::format("{}: key '{}': must not be negative, got {}", origin, key, v));
  return x;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

void check_choice(const std::string& origin, const std::string& key, const std::string& v,
                  const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw UsageError(fmt::format("{}: key '{}': '{}' is not one of {}", origin, key, v, list));
  }
}

void check_positive(const std::string& origin, const std::string& key, int v) {
  if (v < 1)
    throw UsageError(fmt::format("{}: key '{}': must be at least 1, got {}", origin, key, v));
  if (v > kMaxCount)
    throw UsageError(fmt::format("{}: key '{}': {} is more than {}", origin, key, v, kMaxCount));
}

int parse_non_negative(const std::string& origin, const std::string& key, const std::string& v) {
  const int x = parse_int(origin, key, v);
  if (x < 0)
    throw UsageError(fmt::format("{}: key '{}': must not be negative, got {}", origin, key, x));
  if (x > kMaxKeys)
    throw UsageError(fmt::format("{}: key '{}': {} is more than {}", origin, key, x, kMaxKeys));
  return x;
}

// "cluster4" -> the cluster split of 4 partitions (split_plan.h).
int cluster_split_from_word(const std::string& word, const std::string& what) {
  const std::string digits = word.substr(std::string("cluster").size());
  const bool numeric = !digits.empty() && digits.size() <= 2 &&
                       digits.find_first_not_of("0123456789") == std::string::npos;
  const int p = numeric ? std::stoi(digits) : 0;
  if (p < 2 || p > kMaxClusterPartitions)
    throw UsageError(
        fmt::format("{}: '{}': a cluster split is cluster2 .. cluster{} (partitions "
                    "combined in one thread-block cluster)",
                    what, word, kMaxClusterPartitions));
  return encode_cluster_split(p);
}

// Sets one field from its text form (shared by the inline and the JSON readers).
void set_field(ProblemSpec& spec, const std::string& key, const std::string& value) {
  const std::string& o = spec.origin;
  const std::string what = fmt::format("{}: key '{}'", o, key);
  // One list value: positive and at most `limit` (a length or count past it is a typo, not a
  // problem any GPU holds).
  auto list_value = [&](const ListItem& item, long long limit) {
    if (item.is_word) throw UsageError(fmt::format("{}: '{}' is not an integer", what, item.word));
    if (item.value < 1 || item.value > limit)
      throw UsageError(fmt::format("{}: {} is not in [1, {}]", what, item.value, limit));
    return static_cast<int>(item.value);
  };
  auto ints = [&](std::vector<int>& dst) {
    dst.clear();
    for (const ListItem& item : expand_list(value, what)) dst.push_back(list_value(item, kMaxKeys));
  };
  if (key == "name")
    spec.name = value;
  else if (key == "batch") {
    spec.batch = parse_int(o, key, value);
    check_positive(o, key, *spec.batch);
  } else if (key == "heads") {
    spec.heads = parse_int(o, key, value);
    check_positive(o, key, *spec.heads);
  } else if (key == "kv_heads") {
    spec.kv_heads = parse_int(o, key, value);
    check_positive(o, key, *spec.kv_heads);
  } else if (key == "depth") {
    spec.depth = parse_int(o, key, value);
    if (*spec.depth != 64 && *spec.depth != 128 && *spec.depth != 256)
      throw UsageError(
          fmt::format("{}: key 'depth': {} is not one of 64, 128, 256", o, *spec.depth));
  } else if (key == "dtype") {
    check_choice(o, key, value, q_dtype_names());
    spec.dtype = value;
  } else if (key == "out_dtype") {
    check_choice(o, key, value, out_dtype_names());
    spec.out_dtype = value;
  } else if (key == "kv_dtype") {
    check_choice(o, key, value, kv_dtype_names());
    spec.kv_dtype = value;
  } else if (key == "kv_scale") {
    check_choice(o, key, value, {"tensor", "head"});
    spec.kv_scale = value;
  } else if (key == "soft_cap") {
    spec.soft_cap = parse_non_negative_float(o, key, value);  // 0: no cap (a spec can say so)
  } else if (key == "kv") {
    check_choice(o, key, value, kv_names());
    spec.kv = value;
  }
  // page_size, window and chunk: 0 means "not used" (the family's default applies where it is).
  else if (key == "page_size") {
    if (const int v = parse_non_negative(o, key, value)) spec.page_size = v;
  } else if (key == "mask") {
    check_choice(o, key, value, mask_names());
    spec.mask = value;
  } else if (key == "window") {
    if (const int v = parse_non_negative(o, key, value)) spec.window = v;
  } else if (key == "chunk") {
    if (const int v = parse_non_negative(o, key, value)) spec.chunk = v;
  } else if (key == "tree_depth") {
    const int v = parse_int(o, key, value);
    if (v < 1 || v > kMaxQueryTokens)
      throw UsageError(
          fmt::format("{}: key 'tree_depth': {} is not in 1..{} (a draft tree is at "
                      "most as deep as its tokens)",
                      o, value, kMaxQueryTokens));
    spec.tree_depth = v;
  } else if (key == "sink") {
    check_choice(o, key, value, {"true", "false", "1", "0"});
    spec.sink = value == "true" || value == "1";
  } else if (key == "keys")
    ints(spec.keys);
  else if (key == "lengths")
    ints(spec.lengths);
  else if (key == "mix") {
    check_choice(o, key, value, length_mix_names());
    spec.mix = value;
  } else if (key == "mix_seed")
    spec.mix_seed = parse_non_negative(o, key, value);
  else if (key == "partitions") {  // counts; "auto" adds the partition rule's pick, "plan" plans,
    spec.partitions.clear();       // "clusterP" P partitions combined in a cluster
    spec.partitions_auto = false;
    spec.partitions_plan = false;
    for (const ListItem& item : expand_list(value, what)) {
      if (item.is_word && item.word == "auto")
        spec.partitions_auto = true;
      else if (item.is_word && item.word == "plan")
        spec.partitions_plan = true;
      else if (item.is_word && item.word.rfind("cluster", 0) == 0)
        spec.partitions.push_back(cluster_split_from_word(item.word, what));
      else
        spec.partitions.push_back(list_value(item, kMaxPartitions));
    }
  } else if (key == "plan_blocks_per_sm") {
    spec.plan_blocks_per_sm.clear();
    for (const ListItem& item : expand_list(value, what))
      spec.plan_blocks_per_sm.push_back(list_value(item, kMaxPlanBlocksPerSm));
  } else if (key == "plan_min_chunk") {
    spec.plan_min_chunk.clear();
    for (const ListItem& item : expand_list(value, what))
      spec.plan_min_chunk.push_back(list_value(item, kMaxPlanMinChunkKeys));
  } else if (key == "q_len") {
    spec.q_len.clear();
    for (const ListItem& item : expand_list(value, what))
      spec.q_len.push_back(list_value(item, kMaxQueryTokens));
  } else if (key == "q_lens") {  // a ragged step: a sequence may have no new token
    spec.q_lens.clear();
    for (const ListItem& item : expand_list(value, what)) {
      if (item.is_word || item.value < 0 || item.value > kMaxQueryTokens)
        throw UsageError(fmt::format("{}: '{}' is not a token count in [0, {}]", what,
                                     item.is_word ? item.word : std::to_string(item.value),
                                     kMaxQueryTokens));
      spec.q_lens.push_back(static_cast<int>(item.value));
    }
  } else if (key == "q_std")
    spec.q_std = parse_non_negative_float(o, key, value);
  else if (key == "sink_mean")
    spec.sink_mean = parse_float(o, key, value);
  else if (key == "scale")
    spec.scale = parse_non_negative_float(o, key, value);
  else {
    std::string list;
    for (const auto& k : kSpecKeys) list += (list.empty() ? "" : ", ") + k;
    throw UsageError(fmt::format("{}: unknown key '{}' (known: {})", o, key, list));
  }
}

std::string json_scalar_text(const std::string& origin, const std::string& key,
                             const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  if (v.is_array()) {  // one level only: [[1, 2], [3]] would otherwise flatten silently
    std::string out;
    for (const auto& e : v) {
      if (e.is_array() || e.is_object())
        throw UsageError(fmt::format("{}: key '{}': a list holds numbers or strings, not {}",
                                     origin, key, e.is_array() ? "lists" : "objects"));
      out += (out.empty() ? "" : ":") + json_scalar_text(origin, key, e);
    }
    if (out.empty()) throw UsageError(fmt::format("{}: key '{}': empty list", origin, key));
    return out;
  }
  throw UsageError(
      fmt::format("{}: key '{}': expected a number, string, boolean or list", origin, key));
}

}  // namespace

ProblemSpec parse_problem_spec(const std::string& text) {
  ProblemSpec spec;
  spec.origin = fmt::format("--problem \"{}\"", text);
  std::set<std::string> seen;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw UsageError(fmt::format("{}: '{}' is not key=value", spec.origin, item));
    const std::string key = item.substr(0, eq);
    // "keys=512,keys=1024" would keep the last and drop the first without a word.
    if (!seen.insert(key).second)
      throw UsageError(fmt::format("{}: key '{}' given twice", spec.origin, key));
    set_field(spec, key, item.substr(eq + 1));
  }
  return spec;
}

std::vector<ProblemSpec> problem_specs_from_json(const std::string& origin, const void* json_ptr) {
  const auto& j = *static_cast<const nlohmann::json*>(json_ptr);
  if (!j.is_object() || !j.contains("problems") || !j["problems"].is_array())
    throw UsageError(fmt::format("{}: key 'problems': expected a list of problem objects", origin));
  // An empty list would run nothing (or verify's built-in suite instead) without a word.
  if (j["problems"].empty())
    throw UsageError(fmt::format("{}: key 'problems': the list is empty", origin));
  std::vector<ProblemSpec> specs;
  for (size_t i = 0; i < j["problems"].size(); ++i) {
    const auto& item = j["problems"][i];
    ProblemSpec spec;
    spec.origin = fmt::format("{}: problems[{}]", origin, i);
    if (!item.is_object()) throw UsageError(fmt::format("{}: expected an object", spec.origin));
    for (auto it = item.begin(); it != item.end(); ++it) {
      if (it.key() == "name" && !it.value().is_string())  // [0] would become the name "0"
        throw UsageError(fmt::format("{}: key 'name': expected a string", spec.origin));
      const bool is_list_key = it.key() == "keys" || it.key() == "lengths" ||
                               it.key() == "partitions" || it.key() == "plan_blocks_per_sm" ||
                               it.key() == "plan_min_chunk" || it.key() == "q_len" ||
                               it.key() == "q_lens";
      if (it.value().is_array() && !is_list_key)  // "q_std": [0] would read as 0
        throw UsageError(
            fmt::format("{}: key '{}': expected one value, not a list", spec.origin, it.key()));
      set_field(spec, it.key(), json_scalar_text(spec.origin, it.key(), it.value()));
    }
    specs.push_back(spec);
  }
  return specs;
}

std::vector<ProblemSpec> read_problem_file(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "the problem file");
  if (j.is_object() && j.contains("suite"))
    return problem_specs_from_json(path + ": suite", &j["suite"]);
  return problem_specs_from_json(path, &j);
}

std::vector<ProblemSpec> collect_problem_specs(const std::vector<std::string>& inline_specs,
                                               const std::string& problems_file) {
  std::vector<ProblemSpec> specs;
  for (const auto& text : inline_specs) specs.push_back(parse_problem_spec(text));
  if (!problems_file.empty())
    for (auto& s : read_problem_file(problems_file)) specs.push_back(s);
  return specs;
}

std::vector<VisibleRange> visible_ranges(const Problem& p) {
  const ProblemShape& s = p.shape;
  const MaskKind mask = mask_from_name(s.mask);
  std::vector<VisibleRange> ranges;
  const std::vector<int> tokens = sequence_q_lens(s);
  // A sequence without a token reads nothing, but a plan gives it the range of one: its blocks
  // find no row of theirs and return.
  for (size_t b = 0; b < p.lengths.size(); ++b)
    ranges.push_back(visible_range(p.lengths[b], mask, s.window, s.chunk,
                                   std::max(1, b < tokens.size() ? tokens[b] : s.q_len)));
  return ranges;
}

std::vector<int> sequence_q_lens(const ProblemShape& s) {
  return s.ragged_q_lens.empty() ? std::vector<int>(s.batch, s.q_len) : s.ragged_q_lens;
}

long long total_query_tokens(const ProblemShape& s) {
  const std::vector<int> tokens = sequence_q_lens(s);
  return std::accumulate(tokens.begin(), tokens.end(), 0LL);
}

std::vector<int> query_token_starts(const ProblemShape& s) {
  std::vector<int> starts{0};
  for (int n : sequence_q_lens(s)) starts.push_back(starts.back() + n);
  return starts;
}

double visible_kv_bytes(const Problem& p) {
  const ProblemShape& s = p.shape;
  const std::vector<int> tokens = sequence_q_lens(s);
  const std::vector<VisibleRange> ranges = visible_ranges(p);
  double visible_keys = 0;
  // A sequence without a token reads nothing: its blocks return before their first copy.
  for (size_t b = 0; b < ranges.size(); ++b)
    if (b >= tokens.size() || tokens[b] > 0) visible_keys += ranges[b].end - ranges[b].begin;
  return visible_keys * s.kv_heads * s.depth * 2.0 * element_bytes(s.kv_dtype);  // K and V
}

double step_bytes_with_partials(const Problem& p, long long partial_rows_per_head) {
  const ProblemShape& s = p.shape;
  const double elem = element_bytes(s.dtype), out_elem = element_bytes(s.out_dtype);
  const double tokens = double(total_query_tokens(s));
  const double query_rows = tokens * s.heads;
  double bytes = visible_kv_bytes(p) + query_rows * s.depth * (elem + out_elem);  // q in, out
  // Each partial row is written once and read once: output columns plus (max, sum), for every
  // query token (a ragged step's: its mean tokens a sequence).
  bytes += 2.0 * double(partial_rows_per_head) * (tokens / s.batch) * s.heads * (s.depth + 2) * 4;
  return bytes;
}

double step_bytes(const Problem& p, int partitions) {
  // A cluster split's partials stay in distributed shared memory.
  if (is_cluster_split(partitions)) return step_bytes_with_partials(p, 0);
  return step_bytes_with_partials(
      p, partitions > 1 ? static_cast<long long>(p.shape.batch) * partitions : 0);
}

bool kernel_matches(const KernelTraits& t, const ProblemShape& s, std::string* why_not) {
  auto fail = [&](const std::string& what) {
    if (why_not) *why_not = what;
    return false;
  };
  if (s.kv_heads < 1 || s.heads % s.kv_heads != 0)
    return fail(fmt::format("heads {} is not a multiple of kv_heads {}", s.heads, s.kv_heads));
  if (t.group != s.heads / s.kv_heads)
    return fail(fmt::format("kernel group {} != heads/kv_heads {}", t.group, s.heads / s.kv_heads));
  if (t.depth != s.depth) return fail(fmt::format("kernel depth {} != {}", t.depth, s.depth));
  if (t.dtype != s.dtype) return fail(fmt::format("kernel dtype {} != {}", t.dtype, s.dtype));
  if (t.out_dtype != s.out_dtype)
    return fail(fmt::format("kernel out_dtype {} != {}", t.out_dtype, s.out_dtype));
  if (cache_dtype(t) != s.kv_dtype)
    return fail(fmt::format("kernel kv_dtype {} != {}", cache_dtype(t), s.kv_dtype));
  if (t.soft_cap != (s.soft_cap > 0))
    return fail(t.soft_cap ? "kernel soft-caps the scores; the problem has no soft_cap"
                           : fmt::format("kernel has no soft cap; the problem's soft_cap is {:g}",
                                         s.soft_cap));
  if (t.kv != s.kv) return fail(fmt::format("kernel kv {} != {}", t.kv, s.kv));
  if (t.mask != s.mask) return fail(fmt::format("kernel mask {} != {}", t.mask, s.mask));
  if (t.has_sink != s.has_sink)
    return fail(fmt::format("kernel sink {} != {}", t.has_sink, s.has_sink));
  // One query token runs on the single-token kernels, whose row arithmetic is constant; several
  // need a multi-token one.
  if (t.multi_token && !multi_token_step(s))
    return fail("kernel computes several query tokens; the problem has q_len 1");
  if (!t.multi_token && !s.ragged_q_lens.empty())
    return fail(
        "kernel computes one query token; the problem's sequences have ragged token "
        "counts (q_lens)");
  if (!t.multi_token && s.q_len > 1)
    return fail(fmt::format("kernel computes one query token; the problem has q_len {}", s.q_len));
  return true;
}

namespace {

// "_q<n>" for n tokens a sequence (nothing for one); a ragged step adds "r" and its counts, a long
// list its size and a hash ("_q8r2-0-8-4", "_q8r64h1a2b3c4d").
std::string query_tokens_name(const ProblemShape& s) {
  if (s.ragged_q_lens.empty()) return s.q_len > 1 ? fmt::format("_q{}", s.q_len) : "";
  const std::string list = fmt::format("{}", fmt::join(s.ragged_q_lens, "-"));
  if (list.size() <= 40) return fmt::format("_q{}r{}", s.q_len, list);
  return fmt::format("_q{}r{}h{}", s.q_len, s.ragged_q_lens.size(), fnv1a_hex(list).substr(0, 8));
}

}  // namespace

std::string problem_name(const Problem& p) {
  const ProblemShape& s = p.shape;
  std::string name =
      fmt::format("b{}_h{}_kv{}_d{}_n{}", s.batch, s.heads, s.kv_heads, s.depth, s.keys);
  name += query_tokens_name(s);
  name += "_" + s.dtype;
  if (s.out_dtype != s.dtype) name += "_o" + s.out_dtype;
  if (s.kv_dtype != s.dtype) name += "_kv" + s.kv_dtype + (s.kv_scale == "head" ? "h" : "");
  name += "_" + s.kv;
  if (is_paged(s.kv)) name += fmt::format("{}", s.page_size);
  name += "_" + s.mask;
  if (mask_from_name(s.mask) == MaskKind::kWindow) name += fmt::format("{}", s.window);
  if (mask_from_name(s.mask) == MaskKind::kChunked) name += fmt::format("{}", s.chunk);
  if (mask_from_name(s.mask) == MaskKind::kTree) name += fmt::format("{}", s.tree_depth);
  if (s.soft_cap > 0) name += fmt::format("_cap{:g}", s.soft_cap);
  if (s.has_sink) name += fmt::format("_sink{:g}", p.sink_mean);
  if (!s.lengths.empty()) name += "_" + s.lengths;
  if (p.q_std != 1.f) name += fmt::format("_qstd{:g}", p.q_std);
  if (p.scale > 0.f) name += fmt::format("_scale{:g}", p.scale);
  return name;
}

std::vector<int> spec_partitions(const ProblemSpec& spec) {
  std::vector<int> out = spec.partitions;
  if (spec.partitions_plan) {  // one plan per combination of its knobs
    const SplitPlanKnobs defaults;
    const std::vector<int> per_sm = spec.plan_blocks_per_sm.empty()
                                        ? std::vector<int>{defaults.blocks_per_sm}
                                        : spec.plan_blocks_per_sm;
    const std::vector<int> min_chunk = spec.plan_min_chunk.empty()
                                           ? std::vector<int>{defaults.min_chunk_keys}
                                           : spec.plan_min_chunk;
    for (int w : per_sm)
      for (int c : min_chunk) out.push_back(encode_split_plan({w, c}));
  }
  return out;
}

namespace {

// The problems of one query length (instantiate: one per q_len value; a ragged step's q_len is its
// most tokens).
std::vector<Problem> instantiate_tokens(const ProblemSpec& spec, const KernelTraits& t, int q_len,
                                        std::string* why_not) {
  Problem base;
  ProblemShape& s = base.shape;
  s.q_len = q_len;
  s.ragged_q_lens = spec.q_lens;
  s.dtype = spec.dtype.value_or(t.dtype);
  s.out_dtype = spec.out_dtype.value_or(t.out_dtype);
  // An fp8 cache and a soft cap change the data and the function, not the tiling: a spec gets
  // them only by saying so (its q dtype's cache and no cap otherwise), never from the kernel.
  s.kv_dtype = spec.kv_dtype.value_or(s.dtype);
  if (is_fp8(s.kv_dtype)) s.kv_scale = spec.kv_scale.value_or("tensor");
  s.soft_cap = spec.soft_cap.value_or(0.f);
  s.depth = spec.depth.value_or(t.depth);
  s.kv = spec.kv.value_or(t.kv);
  s.mask = spec.mask.value_or(t.mask);
  s.has_sink = spec.sink.value_or(t.has_sink);
  s.kv_heads = spec.kv_heads.value_or(spec.heads ? std::max(1, *spec.heads / t.group) : 8);
  s.heads = spec.heads.value_or(s.kv_heads * t.group);
  s.page_size = is_paged(s.kv) ? spec.page_size.value_or(16) : 0;
  s.window = mask_from_name(s.mask) == MaskKind::kWindow ? spec.window.value_or(128) : 0;
  s.chunk = mask_from_name(s.mask) == MaskKind::kChunked ? spec.chunk.value_or(256) : 0;
  // A tree no deeper than its tokens; by default half as deep (8 drafts: depth 4).
  if (mask_from_name(s.mask) == MaskKind::kTree)
    s.tree_depth = std::min(q_len, spec.tree_depth.value_or((q_len + 1) / 2));
  base.partitions = spec_partitions(spec);
  if (base.partitions.empty() && !spec.partitions_auto) base.partitions = {1};
  base.partitions_auto = spec.partitions_auto;
  base.q_std = spec.q_std.value_or(1.f);
  base.sink_mean = spec.sink_mean.value_or(0.f);
  base.scale = spec.scale.value_or(0.f);
  if (!kernel_matches(t, s, why_not)) return {};
  if (spec.kv_scale && !is_fp8(s.kv_dtype)) {  // scales belong to fp8 caches
    if (why_not)
      *why_not = fmt::format("kv_scale {} needs an fp8 cache, not {}", *spec.kv_scale, s.kv_dtype);
    return {};
  }

  std::vector<Problem> out;
  // `name_keys`: the keys value a named spec's problem is named by ("<name>_n<keys>": the length,
  // or a mix's scale); 0 for an explicit lengths list, which the name alone identifies.
  auto finish = [&](Problem p, int name_keys) {
    // Past 1 TiB of K/V no GPU holds the problem; catching it here keeps sizes far from overflow.
    const double kv_bytes = 4.0 * p.shape.kv_heads * p.shape.depth *
                            std::accumulate(p.lengths.begin(), p.lengths.end(), 0.0);
    if (kv_bytes > 1099511627776.0)
      throw UsageError(fmt::format(
          "{}: problem {}: its K/V cache is {:.0f} GiB (batch {}, keys {}); "
          "more than 1 TiB fits no GPU",
          spec.origin, problem_name(p), kv_bytes / (1 << 30), p.shape.batch, p.shape.keys));
    if (!spec.q_lens.empty() && p.shape.batch != static_cast<int>(spec.q_lens.size()))
      throw UsageError(fmt::format("{}: key 'q_lens': {} token counts for a batch of {}",
                                   spec.origin, spec.q_lens.size(), p.shape.batch));
    if (spec.name) {
      p.shape.name = name_keys > 0 ? fmt::format("{}_n{}", *spec.name, name_keys) : *spec.name;
      p.shape.name += query_tokens_name(p.shape);
    } else
      p.shape.name = problem_name(p);
    out.push_back(p);
  };
  if (spec.mix) {  // one seeded ragged batch per keys value (the mix's scale)
    if (!spec.lengths.empty())
      throw UsageError(
          fmt::format("{}: keys 'mix' and 'lengths' both give the lengths: keep one", spec.origin));
    if (!spec.batch)
      throw UsageError(fmt::format("{}: key 'batch' is required with 'mix'", spec.origin));
    if (spec.keys.empty())
      throw UsageError(
          fmt::format("{}: key 'keys' (the mix's scale) is required with 'mix'", spec.origin));
    const int seed = spec.mix_seed.value_or(1);
    for (int n : spec.keys) {
      Problem p = base;
      p.lengths = mix_lengths(*spec.mix, *spec.batch, n, seed, kMaxKeys, spec.origin);
      p.shape.batch = *spec.batch;
      p.shape.keys = p.max_length();
      p.shape.lengths = mix_name(*spec.mix, *spec.batch, n, seed);
      p.shape.ragged_lengths = p.lengths;
      finish(p, n);
    }
    return out;
  }
  if (!spec.lengths.empty()) {
    if (spec.batch && *spec.batch != static_cast<int>(spec.lengths.size()))
      throw UsageError(fmt::format("{}: key 'batch': {} disagrees with the {} lengths given",
                                   spec.origin, *spec.batch, spec.lengths.size()));
    Problem p = base;
    p.lengths = spec.lengths;
    p.shape.batch = static_cast<int>(spec.lengths.size());
    p.shape.keys = p.max_length();
    std::string list;
    for (int n : spec.lengths) list += (list.empty() ? "" : "-") + std::to_string(n);
    p.shape.lengths = "ragged" + list;
    p.shape.ragged_lengths = p.lengths;
    // A long list is named by its size, its longest and a hash of the whole list: two lists of one
    // size and longest must not share a name (one name never stands for two problems).
    if (list.size() > 40)
      p.shape.lengths = fmt::format("ragged{}x{}h{}", spec.lengths.size(), p.shape.keys,
                                    fnv1a_hex(list).substr(0, 8));
    finish(p, 0);
    return out;
  }
  if (spec.keys.empty())
    throw UsageError(fmt::format("{}: key 'keys' (or 'lengths') is required", spec.origin));
  for (int n : spec.keys) {
    Problem p = base;
    p.shape.batch = spec.batch.value_or(1);
    p.shape.keys = n;
    p.lengths.assign(p.shape.batch, n);
    finish(p, n);
  }
  return out;
}

}  // namespace

std::vector<Problem> instantiate(const ProblemSpec& spec, const KernelTraits& t,
                                 std::string* why_not) {
  // A spec without q_len is a single-token step; with a list, one problem per value the kernel
  // computes (single- and multi-token kernels share a list such as 1:2:4:8).
  std::vector<int> q_lens = spec.q_len.empty() ? std::vector<int>{1} : spec.q_len;
  if (!spec.q_lens.empty()) {  // one ragged step, sized by its most tokens
    if (!spec.q_len.empty())
      throw UsageError(fmt::format(
          "{}: keys 'q_len' and 'q_lens' both give the query tokens: keep one", spec.origin));
    const int most = *std::max_element(spec.q_lens.begin(), spec.q_lens.end());
    if (most == 0)
      throw UsageError(
          fmt::format("{}: key 'q_lens': no sequence has a query token (the step computes nothing)",
                      spec.origin));
    q_lens = {most};
  }
  std::vector<Problem> out;
  for (int q_len : q_lens)
    for (Problem& p : instantiate_tokens(spec, t, q_len, why_not)) out.push_back(std::move(p));
  return out;
}

}  // namespace mha
