// The defaults an engine loads at run time: per kernel family, the (kernel, split) `mha-tune
// select` chose on a grid of half octaves of batch x KV heads and of keys (a measured bucket where
// one was measured, else its time model), and the time model itself, for one GPU model. Plain
// data and one lookup: select and the library both answer through it.
#pragma once

#include <string>
#include <vector>

#include "common/partition_rule.h"
#include "defaults/time_model_params.h"

namespace mha {

// "bf16_d128_g4_contig_null", "bf16_kve4m3_d128_g4_paged_null_sink": what select's time model
// and this table key a compiled family by (dtype_key as in kernel_registry.h).
std::string family_name(const std::string& dtype_key, int depth, int group, const std::string& kv,
                        const std::string& mask, bool has_sink);

// A procedural kernel name's tile, from "bm" on ("..._null_bm16_bn64_bk32_wm16_wn16_t128_s4_wsk"
// -> "bm16_bn64_bk32_wm16_wn16_t128_s4_wsk"); "" when the name has none.
std::string tile_of_kernel_name(const std::string& kernel);

// Half octaves: round(2 log2 x), x >= 1.
int half_octave(double x);

// A choice of another tile at the same grid point, for a build that lacks the first.
struct DefaultsAlternative {
  std::string kernel;
  int partitions = 1;
};

// At most this many alternatives an entry: a build of a few kernels (an engine's) still finds a
// tuned choice where the best tile of the sweep is not compiled in.
constexpr int kMaxDefaultsAlternatives = 3;

struct DefaultsEntry {
  int work_half_octave = 0;  // of batch x KV heads
  int keys_half_octave = 0;  // of the longest sequence
  bool ragged = false;       // the sequences' lengths differ
  std::string kernel;        // the procedural name of the chosen instance
  int partitions = 1;        // the split: a count, a plan (< 0) or a cluster code (split_plan.h)
  bool is_measured = false;  // from a bucket select measured (else from its time model)
  std::vector<DefaultsAlternative> alternatives;  // other tiles, best first (the time model's)
};

// The entry's own choice, then its alternatives: the order the library tries them in.
std::vector<DefaultsAlternative> choices_of(const DefaultsEntry& entry);

struct DefaultsFamily {
  std::string family;
  std::vector<DefaultsEntry> entries;
};

struct DefaultsTable {
  std::string gpu_name;
  int sm_count = 0;
  std::string origin;  // the file it came from, or "compiled in"
  PartitionRule rule;  // select's fitted rule
  std::vector<DefaultsFamily> families;
  // select's time model (empty in a table written before it was carried): where the nearest entry
  // is not a measured bucket, the library chooses with it for the shape in hand, not the grid
  // point's choice (docs/design.md, "The time model").
  TimeModel model;
};

struct DefaultsQuery {
  std::string family;
  int batch_kv_heads = 1;
  int keys = 1;
  bool ragged = false;
};

// The entry of the query's family nearest it (half octaves of work plus half octaves of keys;
// ties to fewer work units, then fewer keys), among entries of the query's raggedness when the
// family has any; nullptr when the family is not in the table.
const DefaultsEntry* lookup_defaults(const DefaultsTable& table, const DefaultsQuery& query);

// Whether `entry` is a measured bucket of the query's own shape: measured, at the query's batch x
// KV heads exactly (a grid point's work units: round(2^(half octave / 2))) and its keys' half
// octave. A measured entry answers only for its own batch: one batch x KV heads away the blocks
// fill other waves. Elsewhere the table's model, where it has one, chooses for the shape.
bool is_own_bucket(const DefaultsEntry& entry, const DefaultsQuery& query);

// The table as select's --out-defaults writes it and the library reads it:
// {"schema_version": 1, "what": ..., "gpu_name", "sm_count", "partition_rule": {"alpha",
//  "min_keys_per_partition", "max_partitions", "fitted"}, "kernels": [names],
//  "families": [{"family", "entries": [[work, keys, ragged, kernel index, split, measured,
//  [[kernel index, split], ...]]]}], "time_model": {...}}, the split in its text form ("16",
//  "cluster4",
// "plan2x128"; an integer code is read too); the alternatives (the last element) are optional.
// Throws std::invalid_argument naming `origin` and the key that is wrong.
DefaultsTable defaults_from_json_text(const std::string& text, const std::string& origin);
std::string defaults_to_json_text(const DefaultsTable& table);

}  // namespace mha
