// The library entry points of decode_api.h, over the registry of compiled instances. Host code
// only: mha::decode links to mha::kernels and CUDA's runtime, nothing of the CLI.
#include "api/decode_api.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "api/time_model_choice.h"
#include "common/split_code.h"
#include "defaults/defaults_table.h"

namespace mha {

// The table CMake embedded (generated compiled_defaults.cpp, from MHA_DEFAULTS_JSON).
extern const char* const kCompiledDefaultsOrigin;
extern const char* const kCompiledDefaultsJson;

namespace {

// Whether the shape runs on the multi-token kernels: several tokens a sequence, or ragged counts.
bool multi_token(const DecodeShape& s) { return s.q_len > 1 || s.ragged_q_len; }

bool computes_shape(const KernelTraits& t, const DecodeShape& s) {
  const std::string& kv_dtype = s.kv_dtype.empty() ? s.dtype : s.kv_dtype;
  return s.kv_heads > 0 && s.heads % s.kv_heads == 0 && t.dtype == s.dtype &&
         cache_dtype(t) == kv_dtype && t.soft_cap == s.soft_cap && t.out_dtype == s.out_dtype &&
         t.depth == s.depth && t.group == s.heads / s.kv_heads && t.kv == s.kv &&
         t.mask == s.mask && t.has_sink == s.has_sink && t.multi_token == multi_token(s);
}

// The run-time table (load_decode_defaults, or MHA_TUNE_DEFAULTS read at the first choice); null:
// the compiled-in header.
std::mutex g_defaults_mutex;
std::shared_ptr<const DefaultsTable> g_defaults;
bool g_env_read = false;

std::shared_ptr<const DefaultsTable> read_table(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = path + ": cannot be read";
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    return std::make_shared<const DefaultsTable>(defaults_from_json_text(text.str(), path));
  } catch (const std::invalid_argument& e) {
    if (error) *error = e.what();
    return nullptr;
  }
}

// The compiled-in table, parsed once (a broken one is a build error caught by the host tests; here
// it leaves choose_decode the family's first kernel and the default rule).
const DefaultsTable& compiled_table() {
  static const DefaultsTable table = [] {
    try {
      return defaults_from_json_text(kCompiledDefaultsJson, kCompiledDefaultsOrigin);
    } catch (const std::invalid_argument&) {
      DefaultsTable none;
      none.origin = kCompiledDefaultsOrigin;
      return none;
    }
  }();
  return table;
}

std::shared_ptr<const DefaultsTable> current_table() {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  if (!g_defaults && !g_env_read) {
    g_env_read = true;
    if (const char* path = std::getenv("MHA_TUNE_DEFAULTS"); path != nullptr && *path != '\0')
      g_defaults = read_table(path, nullptr);  // unreadable: the compiled-in table, as unset
  }
  return g_defaults;
}

// A compiled kernel of `kernel`'s tile that computes the shape: the instance itself, or the one
// of the same tile for the shape's out_dtype (the table keys families without it).
const KernelEntry* compiled_instance(const std::string& kernel, const DecodeShape& s) {
  const KernelEntry* k = find_kernel(kernel);
  if (k != nullptr && computes_shape(k->traits, s)) return k;
  const std::string tile = tile_of_kernel_name(kernel);
  for (const KernelEntry& other : kernel_registry())
    if (computes_shape(other.traits, s) && tile_of_kernel_name(other.name) == tile) return &other;
  return nullptr;
}

// The shape as the time model reads it.
ProblemShape model_shape(const DecodeShape& s) {
  ProblemShape p;
  p.batch = s.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.depth = s.depth;
  p.dtype = s.dtype;
  p.out_dtype = s.out_dtype;
  p.kv_dtype = s.kv_dtype.empty() ? s.dtype : s.kv_dtype;
  p.soft_cap = s.soft_cap ? 1.0 : 0.0;
  p.kv = s.kv;
  p.mask = s.mask;
  p.has_sink = s.has_sink;
  p.keys = std::max(1, s.max_keys);
  p.q_len = s.q_len;
  // A ragged step's counts are the run's; its q_len bounds them, so the model prices q_len each
  // on the multi-token family.
  if (s.ragged_q_len) p.ragged_q_lens.assign(std::max(1, s.batch), s.q_len);
  return p;
}

// The table's time model's choice for the shape in hand, among the tiles compiled into this build:
// the grid point's entry is the model's choice at the point, and between points the model's choice
// changes (a wave boundary, a tile's occupancy), so the library asks the model itself.
bool choose_by_table_model(const DefaultsTable& table, const DefaultsEntry* e,
                           const DefaultsQuery& q, const DecodeShape& s, bool plans,
                           DecodeChoice* c) {
  std::map<const TileModel*, const KernelEntry*> compiled;
  auto instance = [&](const TileModel& t) {
    auto [it, is_new] = compiled.emplace(&t, nullptr);
    if (is_new) it->second = compiled_instance(t.kernel, s);
    return it->second;
  };
  const ModelChoice m =
      table_model_choice(table, e, q, model_shape(s), [&](const TileModel& t, int split) {
        return (plans || !is_split_plan(split)) && instance(t) != nullptr;
      });
  if (m.tile == nullptr) return false;
  c->kernel = instance(*m.tile);
  c->split = m.partitions;
  c->partitions = split_count(m.partitions);
  c->cluster_combine = is_cluster_split(m.partitions);
  c->is_tuned = false;
  c->reason = "tuned: the time model for this shape" +
              std::string(m.is_own_family
                              ? ""
                              : ", the nearest fitted family's tiles (" + m.tile->family + ")") +
              " (" + table.origin + ")";
  return true;
}

// The table's answer as a choice of a compiled kernel: the entry's own, else the first of its
// alternatives (other tiles, best first) this build has.
bool choose_from_table(const DefaultsTable& table, const DecodeShape& s, int sm_count, bool plans,
                       DecodeChoice* c) {
  if (table.sm_count != sm_count) return false;  // measured on another GPU model
  const int group = s.heads / s.kv_heads;
  DefaultsQuery q;
  q.family = family_name(dtype_key(s.dtype, s.kv_dtype, s.soft_cap, multi_token(s)), s.depth, group,
                         s.kv, s.mask, s.has_sink);
  q.batch_kv_heads = s.batch * s.kv_heads;
  q.keys = std::max(1, s.max_keys);
  q.ragged = s.ragged;
  const DefaultsEntry* e = lookup_defaults(table, q);
  if (choose_by_table_model(table, e, q, s, plans, c)) return true;
  if (e == nullptr) return false;
  const std::vector<DefaultsAlternative> choices = choices_of(*e);
  for (size_t i = 0; i < choices.size(); ++i) {
    if (!plans && is_split_plan(choices[i].partitions)) continue;  // decode() takes none
    const KernelEntry* k = compiled_instance(choices[i].kernel, s);
    if (k == nullptr) continue;
    c->kernel = k;
    c->split = choices[i].partitions;
    c->partitions = split_count(choices[i].partitions);
    c->cluster_combine = is_cluster_split(choices[i].partitions);
    c->is_tuned = e->is_measured && i == 0;
    c->reason =
        i == 0 ? std::string(e->is_measured ? "tuned: a measured bucket" : "tuned: the time model")
               : "tuned: the time model's choice " + std::to_string(i + 1) +
                     " (the tiles before it are not compiled into this build)";
    c->reason += " (" + table.origin + ")";
    return true;
  }
  return false;
}

}  // namespace

bool load_decode_defaults(const std::string& path, std::string* error) {
  std::shared_ptr<const DefaultsTable> table = read_table(path, error);
  if (!table) return false;
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  g_defaults = std::move(table);
  g_env_read = true;
  return true;
}

void unload_decode_defaults() {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  g_defaults.reset();
  g_env_read = true;
}

std::string decode_defaults_origin() {
  const auto table = current_table();
  return table ? table->origin : "";
}

namespace {

DecodeChoice choose(const DecodeShape& s, int sm_count, bool plans) {
  DecodeChoice c;
  if (s.kv_heads <= 0 || s.heads % s.kv_heads != 0 || s.batch <= 0) {
    c.reason = "invalid shape: heads must be a positive multiple of kv_heads, batch positive";
    return c;
  }
  const auto loaded = current_table();
  if (loaded && choose_from_table(*loaded, s, sm_count, plans, &c)) return c;
  const DefaultsTable& compiled = compiled_table();
  if (choose_from_table(compiled, s, sm_count, plans, &c)) return c;
  // The family's first compiled kernel, partitions from the table's rule (it scales with the SM
  // count, and counts every row block of a KV head: a group larger than the tile's BM).
  const PartitionRule& rule = loaded ? loaded->rule : compiled.rule;
  const int work_units = s.batch * s.kv_heads;
  for (const KernelEntry& k : kernel_registry()) {
    if (!computes_shape(k.traits, s)) continue;
    const int blocks = row_blocks_per_kv_head(k.traits, s.q_len);
    c.kernel = &k;
    if (plans && s.ragged) {
      // The plan's default knobs cost 1.006x the best measured over the ragged suite
      // (split_code.h); no fixed count balances lengths that differ.
      c.split = encode_split_plan(SplitPlanKnobs{});
      c.partitions = 0;
      c.reason =
          "no tuned entry for this shape, GPU and build: first compiled kernel of the "
          "family, the default split plan";
      return c;
    }
    c.partitions = auto_partitions(rule, sm_count, work_units * blocks, std::max(1, s.max_keys));
    c.split = c.partitions;
    c.reason =
        "no tuned entry for this shape, GPU and build: first compiled kernel of the "
        "family, partitions from the rule";
    return c;
  }
  c.reason = "no compiled kernel computes this shape";
  return c;
}

}  // namespace

DecodeChoice choose_decode(const DecodeShape& s, int sm_count) {
  return choose(s, sm_count, false);
}

DecodeChoice choose_decode_with_plans(const DecodeShape& s, int sm_count) {
  return choose(s, sm_count, true);
}

bool kernel_computes(const KernelEntry& kernel, const DecodeShape& shape) {
  return computes_shape(kernel.traits, shape);
}

const KernelEntry* find_kernel(const std::string& name) {
  for (const KernelEntry& k : kernel_registry()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

size_t decode_workspace_bytes(int batch, int heads, int depth, int partitions, int q_len) {
  if (batch <= 0 || heads <= 0 || depth <= 0 || partitions <= 1 || q_len <= 0) return 0;
  const size_t rows = size_t(batch) * size_t(q_len) * size_t(heads) * size_t(partitions);
  return rows * (size_t(depth) + 2) * sizeof(float);  // partial_out, partial_max, partial_sum
}

void attach_decode_workspace(DecodeParams& p, int depth, void* workspace) {
  if (p.partitions <= 1 || workspace == nullptr) {
    p.partial_out = p.partial_max = p.partial_sum = nullptr;
    return;
  }
  // Every query row owns its partitions' rows: heads x q_len a sequence (decode_params.cuh).
  const size_t rows =
      size_t(p.batch) * size_t(std::max(1, p.q_len)) * size_t(p.heads) * size_t(p.partitions);
  p.partial_out = static_cast<float*>(workspace);
  p.partial_max = p.partial_out + rows * size_t(depth);
  p.partial_sum = p.partial_max + rows;
}

cudaError_t decode(const DecodeParams& p, const std::string& kernel_name, cudaStream_t stream) {
  const KernelEntry* k = find_kernel(kernel_name);
  if (k == nullptr || k->launch == nullptr) return cudaErrorInvalidValue;
  // A cluster combine keeps the partials on chip; the launcher runs the reduce for any other split.
  if (p.partitions > 1 && !cluster_combines(p.cluster_combine, p.partitions) &&
      (p.partial_out == nullptr || p.partial_max == nullptr || p.partial_sum == nullptr)) {
    return cudaErrorInvalidValue;
  }
  return k->launch(p, stream);
}

}  // namespace mha
