// select's defaults laid out on the library's grid: one choose_default per grid point, on a shape
// of that family with batch x KV heads and keys at the point.
#include "reports/select_decisions.h"

#include <cmath>
#include <map>
#include <set>

#include "reports/time_model.h"

namespace mha {

namespace {

constexpr int kMaxWorkHalfOctave = 26;  // 8,192 = 2^13 units of batch x KV heads
constexpr int kMinKeysHalfOctave = 12;  // 64 keys
constexpr int kMaxKeysHalfOctave = 36;  // 262,144 keys
// The query length a multi-token family's grid is laid out at (the table has no q_len axis):
// the middle of the 2..8 drafts verify steps check.
constexpr int kGridQueryTokens = 4;

// A shape of the family of `t` at a grid point: KV heads 1, so batch is the work units (the model
// and the buckets read batch x KV heads only, and batch x heads for the partials).
ProblemShape grid_shape(const KernelTraits& t, int work_half_octave, int keys_half_octave,
                        bool ragged) {
  ProblemShape p;
  p.dtype = t.dtype;
  p.out_dtype = t.out_dtype;
  p.kv_dtype = cache_dtype(t);
  p.soft_cap = t.soft_cap ? 1.0 : 0.0;
  p.depth = t.depth;
  p.kv_heads = 1;
  p.heads = std::max(1, t.group);
  p.kv = t.kv;
  p.mask = t.mask;
  p.has_sink = t.has_sink;
  p.q_len = t.multi_token ? kGridQueryTokens : 1;
  p.batch = std::max(1, static_cast<int>(std::lround(std::pow(2.0, work_half_octave / 2.0))));
  p.keys = static_cast<int>(std::lround(std::pow(2.0, keys_half_octave / 2.0)));
  p.name = "grid";
  if (ragged) {  // one sequence at the point's length, the others shorter
    p.ragged_lengths.assign(p.batch, std::max(1, p.keys / 4));
    p.ragged_lengths.front() = p.keys;
    if (p.batch == 1) p.ragged_lengths.push_back(std::max(1, p.keys / 4)), p.batch = 2;
    p.lengths = "ragged";
  }
  return p;
}

// The model's next choices at `shape` among tiles other than `chosen`'s, best first: what a build
// without the chosen tile runs. None for ragged shapes (the model does not price plans).
std::vector<DefaultsAlternative> alternatives_of(const Selection& s, const ProblemShape& shape,
                                                 const KernelTraits& chosen) {
  std::vector<DefaultsAlternative> out;
  if (is_ragged_batch(shape)) return out;
  std::set<std::string> used{tile_id(chosen)};
  while (static_cast<int>(out.size()) < kMaxDefaultsAlternatives) {
    const ModelChoice m = choose_by_model(
        s.model, shape, [&](const TileModel& t, int) { return used.count(t.tile) == 0; });
    if (!m.tile) break;
    out.push_back({m.tile->kernel, m.partitions});
    used.insert(m.tile->tile);
  }
  return out;
}

}  // namespace

DefaultsQuery defaults_query(const ProblemShape& shape) {
  DefaultsQuery q;
  q.family = model_family(shape);
  q.batch_kv_heads = shape.batch * shape.kv_heads;
  q.keys = shape.keys;
  q.ragged = is_ragged_batch(shape);
  return q;
}

DefaultsTable decisions_of(const Selection& s) {
  // family -> (traits of the family, whether it has ragged buckets)
  std::map<std::string, std::pair<KernelTraits, bool>> families;
  for (const TileModel& t : s.model.tiles) families.emplace(t.family, std::pair{t.traits, false});
  for (const BucketChoice& b : s.buckets) {
    // The family of the bucket's problems (what the library is asked for): its cache kind, mask,
    // group and depth from the key, the dtypes and sink from the tile's kernel.
    KernelTraits t = b.traits;
    t.kv = b.key.kv;
    t.mask = b.key.mask;
    t.group = b.key.group;
    t.depth = b.key.depth;
    auto& f = families.emplace(model_family(t), std::pair{t, false}).first->second;
    f.second = f.second || b.key.ragged;
  }
  DefaultsTable table;
  table.gpu_name = s.gpu_name;
  table.sm_count = s.sm_count;
  table.rule = s.rule;
  table.model = s.model;
  for (const auto& [name, info] : families) {
    DefaultsFamily f;
    f.family = name;
    for (const bool ragged : {false, true}) {
      if (ragged && !info.second) continue;
      for (int w = 0; w <= kMaxWorkHalfOctave; ++w) {
        for (int k = kMinKeysHalfOctave; k <= kMaxKeysHalfOctave; ++k) {
          const ProblemShape shape = grid_shape(info.first, w, k, ragged);
          const DefaultChoice c = choose_default(s, shape);
          if (c.source.empty()) continue;
          f.entries.push_back({w, k, ragged, c.kernel, c.partitions, c.source == "bucket",
                               alternatives_of(s, shape, c.traits)});
        }
      }
    }
    if (!f.entries.empty()) table.families.push_back(std::move(f));
  }
  return table;
}

}  // namespace mha
