// The defaults table's lookup and its JSON form, checked on the way in: the library loads it from a
// file an engine names, so every field is range-checked before it is used.
#include "defaults/defaults_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "common/split_code.h"
#include "defaults/time_model_json.h"

namespace mha {

namespace {

// Half octaves from 1 to 2^31 of work units or keys: a value outside is a broken file.
constexpr int kMaxHalfOctave = 62;
constexpr size_t kMaxEntries = 1 << 20;

std::invalid_argument bad(const std::string& origin, const std::string& what) {
  return std::invalid_argument(origin + ": " + what);
}

// An entry's alternatives, [[kernel index, split], ...]: at most kMaxDefaultsAlternatives.
std::vector<DefaultsAlternative> read_alternatives(const nlohmann::json& list,
                                                   const std::vector<std::string>& kernels,
                                                   const std::string& origin,
                                                   const std::string& at) {
  if (!list.is_array() || list.size() > static_cast<size_t>(kMaxDefaultsAlternatives))
    throw bad(origin, at + "[6]: expected at most " + std::to_string(kMaxDefaultsAlternatives) +
                          " alternatives [[kernel index, partitions], ...]");
  std::vector<DefaultsAlternative> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& a = list[i];
    const std::string where = at + "[6][" + std::to_string(i) + "]";
    if (!a.is_array() || a.size() != 2)
      throw bad(origin, where + ": expected [kernel index, partitions]");
    const int kernel = a[0].get<int>();
    if (kernel < 0 || static_cast<size_t>(kernel) >= kernels.size())
      throw bad(origin, where + ": kernel index " + std::to_string(kernel) + " is not in kernels");
    DefaultsAlternative alt;
    alt.kernel = kernels[kernel];
    try {
      alt.partitions =
          a[1].is_string() ? parse_split_label(a[1].get<std::string>()) : a[1].get<int>();
    } catch (const std::invalid_argument& why) {
      throw bad(origin, where + ": " + why.what());
    }
    if (alt.partitions == 0) throw bad(origin, where + ": partitions: 0 is no split");
    out.push_back(std::move(alt));
  }
  return out;
}

}  // namespace

std::string family_name(const std::string& dtype_key, int depth, int group, const std::string& kv,
                        const std::string& mask, bool has_sink) {
  return dtype_key + "_d" + std::to_string(depth) + "_g" + std::to_string(group) + "_" + kv + "_" +
         mask + (has_sink ? "_sink" : "");
}

std::string tile_of_kernel_name(const std::string& kernel) {
  const size_t at = kernel.rfind("_bm");
  if (at == std::string::npos || at + 3 >= kernel.size() ||
      !std::isdigit(static_cast<unsigned char>(kernel[at + 3])))
    return "";
  return kernel.substr(at + 1);
}

int half_octave(double x) { return x <= 1 ? 0 : static_cast<int>(std::lround(2 * std::log2(x))); }

const DefaultsEntry* lookup_defaults(const DefaultsTable& table, const DefaultsQuery& query) {
  const DefaultsFamily* family = nullptr;
  for (const DefaultsFamily& f : table.families)
    if (f.family == query.family) family = &f;
  if (!family) return nullptr;
  const bool has_kind =
      std::any_of(family->entries.begin(), family->entries.end(),
                  [&](const DefaultsEntry& e) { return e.ragged == query.ragged; });
  const int work = half_octave(query.batch_kv_heads), keys = half_octave(query.keys);
  const DefaultsEntry* best = nullptr;
  int best_distance = std::numeric_limits<int>::max();
  for (const DefaultsEntry& e : family->entries) {
    if (has_kind && e.ragged != query.ragged) continue;
    const int d = std::abs(e.work_half_octave - work) + std::abs(e.keys_half_octave - keys);
    const bool better =
        d < best_distance ||
        (d == best_distance && std::tie(e.work_half_octave, e.keys_half_octave) <
                                   std::tie(best->work_half_octave, best->keys_half_octave));
    if (better) {
      best = &e;
      best_distance = d;
    }
  }
  return best;
}

std::vector<DefaultsAlternative> choices_of(const DefaultsEntry& entry) {
  std::vector<DefaultsAlternative> choices{{entry.kernel, entry.partitions}};
  choices.insert(choices.end(), entry.alternatives.begin(), entry.alternatives.end());
  return choices;
}

bool is_own_bucket(const DefaultsEntry& entry, const DefaultsQuery& query) {
  const long work = std::max(1L, std::lround(std::pow(2.0, entry.work_half_octave / 2.0)));
  return entry.is_measured && query.batch_kv_heads == work &&
         half_octave(query.keys) == entry.keys_half_octave;
}

DefaultsTable defaults_from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw bad(origin, std::string("not valid JSON: ") + e.what());
  }
  DefaultsTable t;
  t.origin = origin;
  try {
    if (!j.is_object() || !j.contains("schema_version") || j["schema_version"] != 1)
      throw bad(origin, "schema_version: expected 1 (a `mha-tune select --out-defaults` file)");
    t.gpu_name = j.at("gpu_name").get<std::string>();
    t.sm_count = j.at("sm_count").get<int>();
    const std::vector<std::string> kernels = j.at("kernels").get<std::vector<std::string>>();
    const nlohmann::json& families = j.at("families");
    if (!families.is_array()) throw bad(origin, "families: expected a list");
    if (t.sm_count < 1 || t.sm_count > 100000) throw bad(origin, "sm_count: out of range");
    const nlohmann::json& rule = j.at("partition_rule");
    t.rule.alpha = rule.at("alpha").get<double>();
    t.rule.min_keys_per_partition = rule.at("min_keys_per_partition").get<int>();
    t.rule.max_partitions = rule.at("max_partitions").get<int>();
    t.rule.is_fitted = rule.at("fitted").get<bool>();
    if (!(t.rule.alpha > 0) || t.rule.alpha > 1e6 || t.rule.min_keys_per_partition < 1 ||
        t.rule.max_partitions < 1 || t.rule.max_partitions > 65536)
      throw bad(origin,
                "partition_rule: alpha in (0, 1e6], min_keys_per_partition >= 1, "
                "max_partitions in [1, 65536]");
    size_t total = 0;
    for (size_t i = 0; i < families.size(); ++i) {
      const std::string where = "families[" + std::to_string(i) + "]";
      DefaultsFamily f;
      f.family = families[i].at("family").get<std::string>();
      const nlohmann::json& entries = families[i].at("entries");
      if (!entries.is_array()) throw bad(origin, where + ".entries: expected a list");
      total += entries.size();
      if (total > kMaxEntries) throw bad(origin, "families: more than 2^20 entries");
      for (size_t k = 0; k < entries.size(); ++k) {
        const nlohmann::json& e = entries[k];
        const std::string at = where + ".entries[" + std::to_string(k) + "]";
        if (!e.is_array() || (e.size() != 6 && e.size() != 7))
          throw bad(origin, at + ": expected [work, keys, ragged, kernel index, partitions, "
                                 "measured] and optionally [[kernel index, partitions], ...]");
        DefaultsEntry d;
        d.work_half_octave = e[0].get<int>();
        d.keys_half_octave = e[1].get<int>();
        d.ragged = e[2].get<bool>();
        const int kernel = e[3].get<int>();
        try {
          d.partitions =
              e[4].is_string() ? parse_split_label(e[4].get<std::string>()) : e[4].get<int>();
        } catch (const std::invalid_argument& why) {
          throw bad(origin, at + ": " + why.what());
        }
        d.is_measured = e[5].get<bool>();
        if (d.work_half_octave < 0 || d.work_half_octave > kMaxHalfOctave ||
            d.keys_half_octave < 0 || d.keys_half_octave > kMaxHalfOctave)
          throw bad(origin, at + ": work and keys must be half octaves in [0, 62]");
        if (kernel < 0 || static_cast<size_t>(kernel) >= kernels.size())
          throw bad(origin, at + ": kernel index " + std::to_string(kernel) + " is not in kernels");
        if (d.partitions == 0) throw bad(origin, at + ": partitions: 0 is no split");
        d.kernel = kernels[kernel];
        if (e.size() == 7) d.alternatives = read_alternatives(e[6], kernels, origin, at);
        f.entries.push_back(std::move(d));
      }
      t.families.push_back(std::move(f));
    }
    if (j.contains("time_model")) t.model = time_model_from_json(j["time_model"], "time_model");
  } catch (const nlohmann::json::exception& e) {
    throw bad(origin, e.what());
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.rfind(origin, 0) == 0) throw;  // bad() named the file already
    throw bad(origin, what);
  }
  return t;
}

std::string defaults_to_json_text(const DefaultsTable& table) {
  std::map<std::string, int> kernel_index;
  std::vector<std::string> kernels;
  for (const DefaultsFamily& f : table.families)
    for (const DefaultsEntry& e : f.entries) {
      if (kernel_index.emplace(e.kernel, static_cast<int>(kernels.size())).second)
        kernels.push_back(e.kernel);
      for (const DefaultsAlternative& a : e.alternatives)
        if (kernel_index.emplace(a.kernel, static_cast<int>(kernels.size())).second)
          kernels.push_back(a.kernel);
    }
  nlohmann::json head{
      {"schema_version", 1},
      {"what",
       "mha-tune decode defaults for one GPU model: per family, entries [half "
       "octave of batch x kv_heads, half octave of the longest sequence's keys, "
       "ragged, index into kernels, split (\"16\", \"cluster4\", \"plan2x128\"), "
       "measured bucket (else the time model), optionally [[kernel index, split], ...] "
       "of other tiles, best first]; the library takes the entry nearest a shape: a "
       "measured bucket's choice, else the time model's (time_model, where the table "
       "has one) among the kernels compiled into the build, else the first of the "
       "entry's choices compiled into it"},
      {"gpu_name", table.gpu_name},
      {"sm_count", table.sm_count},
      {"partition_rule",
       {{"alpha", table.rule.alpha},
        {"min_keys_per_partition", table.rule.min_keys_per_partition},
        {"max_partitions", table.rule.max_partitions},
        {"fitted", table.rule.is_fitted}}},
      {"kernels", kernels}};
  // One family a line, so that a diff of two files reads.
  std::string text = head.dump();
  text.pop_back();  // the closing brace: the families follow
  text += ",\n\"families\": [\n";
  for (size_t i = 0; i < table.families.size(); ++i) {
    const DefaultsFamily& f = table.families[i];
    nlohmann::json entries = nlohmann::json::array();
    for (const DefaultsEntry& e : f.entries) {
      nlohmann::json entry = {e.work_half_octave,        e.keys_half_octave,        e.ragged,
                              kernel_index.at(e.kernel), split_label(e.partitions), e.is_measured};
      if (!e.alternatives.empty()) {
        nlohmann::json alternatives = nlohmann::json::array();
        for (const DefaultsAlternative& a : e.alternatives)
          alternatives.push_back({kernel_index.at(a.kernel), split_label(a.partitions)});
        entry.push_back(alternatives);
      }
      entries.push_back(entry);
    }
    text += nlohmann::json{{"family", f.family}, {"entries", entries}}.dump();
    text += i + 1 < table.families.size() ? ",\n" : "\n";
  }
  text += "]";
  if (!table.model.tiles.empty())
    text += ",\n\"time_model\": " + time_model_to_json(table.model).dump();
  return text + "}\n";
}

}  // namespace mha
