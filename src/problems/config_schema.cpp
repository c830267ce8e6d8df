// Validation of config files by the generator's schema, and the check of a config's families
// against the build's. The rules mirror load_config_obj() in scripts/gen_dispatch.py in the same
// order; tests/test_config_schema.py runs both over the same bad configs.
#include "problems/config_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>

#include "common/errors.h"
#include "problems/json_strict.h"

namespace mha {

namespace {

constexpr int kMaxSmemLimitBytes = 1 << 20;  // as scripts/gen_dispatch.py MAX_SMEM_LIMIT_BYTES

using nlohmann::json;

struct Schema {
  int version = 0;
  std::vector<std::string> top_keys, top_required, family_keys, family_required, tile_axes;
  std::vector<std::string> tile_space_keys;  // what a suite's "tile_space" file gives it
  json choices;
};

Schema load_schema(const char* text) {
  const json j = json::parse(text);
  Schema s;
  s.version = j.at("schema_version").get<int>();
  s.top_keys = j.at("top_keys").get<std::vector<std::string>>();
  s.top_required = j.at("top_required").get<std::vector<std::string>>();
  s.family_keys = j.at("family_keys").get<std::vector<std::string>>();
  s.family_required = j.at("family_required").get<std::vector<std::string>>();
  s.tile_axes = j.at("tile_axes").get<std::vector<std::string>>();
  s.tile_space_keys = j.at("tile_space_keys").get<std::vector<std::string>>();
  s.choices = j.at("choices");
  return s;
}

// The generator's names of JSON types, so that both say "wrong type bool, expected int".
std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "bool";
  if (v.is_number_integer()) return "int";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "list";
  return "object";
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

struct Checker {
  const std::string& file;
  const Schema& schema;

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw UsageError(fmt::format("{}: {}: {}", file, key, problem));
  }
  static std::string at(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  void check_keys(const json& obj, const std::vector<std::string>& allowed,
                  const std::string& path) const {
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
        fail(at(path, it.key()), fmt::format("unknown key (allowed: {})", join(allowed, ", ")));
  }
  // A pointer, not a reference: g++ 13's -Wdangling-reference flags references bound to a call
  // with temporary arguments (the string literals here).
  const json* require(const json& obj, const std::string& key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(at(path, key), "missing required key");
    return &*it;
  }
  void check_type(const json& v, bool ok, const char* expected, const std::string& path) const {
    if (!ok) fail(path, fmt::format("wrong type {}, expected {}", type_name(v), expected));
  }
  int positive_int(const json& v, const std::string& path) const {
    check_type(v, v.is_number_integer(), "int", path);
    if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(INT32_MAX)
                               : v.get<long long>() > INT32_MAX)
      fail(path, fmt::format("value {} not allowed (must be <= {})", v.dump(), INT32_MAX));
    if (v.get<long long>() < 1)
      fail(path, fmt::format("value {} not allowed (must be >= 1)", v.dump()));
    return v.get<int>();
  }
  bool boolean(const json& v, const std::string& path) const {
    check_type(v, v.is_boolean(), "bool", path);
    return v.get<bool>();
  }
  const json& choice(const json& v, const std::string& field, const std::string& path) const {
    const json& allowed = schema.choices.at(field);
    const bool want_int = allowed.front().is_number_integer();
    check_type(v, want_int ? v.is_number_integer() : v.is_string(), want_int ? "int" : "string",
               path);
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      std::vector<std::string> list;
      for (const json& a : allowed) list.push_back(a.dump());
      fail(path, fmt::format("value {} not allowed (allowed: {})", v.dump(), join(list, ", ")));
    }
    return v;
  }
  void optional_string(const json& obj, const std::string& key, const std::string& path) const {
    if (obj.contains(key)) check_type(obj[key], obj[key].is_string(), "string", at(path, key));
  }
  void tiles(const json& t, const std::string& path) const {
    if (t.is_array() && t.empty()) fail(path, "empty list of tile blocks");
    const std::vector<json> blocks =
        t.is_array() ? t.get<std::vector<json>>() : std::vector<json>{t};
    for (size_t i = 0; i < blocks.size(); ++i) {
      const std::string bpath = t.is_array() ? fmt::format("{}[{}]", path, i) : path;
      const json& block = blocks[i];
      if (!block.is_object())
        fail(bpath, fmt::format("wrong type {}, expected object (axes {})", type_name(block),
                                join(schema.tile_axes, ", ")));
      check_keys(block, schema.tile_axes, bpath);
      for (const std::string& axis : schema.tile_axes) {
        const json& v = *require(block, axis, bpath);
        const std::string apath = at(bpath, axis);
        if (v.is_array() && v.empty()) fail(apath, "empty axis (give at least one value)");
        const std::vector<json> values =
            v.is_array() ? v.get<std::vector<json>>() : std::vector<json>{v};
        for (size_t k = 0; k < values.size(); ++k) {
          const std::string vpath = v.is_array() ? fmt::format("{}[{}]", apath, k) : apath;
          if (axis == "warp_split_k")
            boolean(values[k], vpath);
          else
            positive_int(values[k], vpath);
        }
      }
    }
  }
};

// The suite `cfg` with its tile space's keys in place of "tile_space", after validating the tile
// space file on its own (so its errors name its file), as _load_tile_space() in the generator.
json with_tile_space(const json& cfg, const std::string& file, const Checker& c,
                     const char* schema_json) {
  const json& name = cfg["tile_space"];
  c.check_type(name, name.is_string(), "string", "tile_space");
  for (const std::string& key : c.schema.tile_space_keys)
    if (cfg.contains(key)) c.fail(key, "not allowed with \"tile_space\" (the tile space gives it)");
  const std::string path = tile_space_path(file, name.get<std::string>());
  if (!std::ifstream(path))
    c.fail("tile_space",
           fmt::format("cannot read the tile space file {} ({})", path, std::strerror(errno)));
  const json tiles = read_json_file(path, "the tile space file");
  for (const char* key : {"tile_space", "suite"})
    if (tiles.is_object() && tiles.contains(key))
      c.fail("tile_space", fmt::format("the tile space file {} has \"{}\" (a tile space holds "
                                       "tiles and families only)",
                                       path, key));
  validate_config(tiles, path, schema_json);
  json merged = cfg;
  merged.erase("tile_space");
  for (const std::string& key : c.schema.tile_space_keys)
    if (tiles.contains(key)) merged[key] = tiles[key];
  return merged;
}

}  // namespace

std::string tile_space_path(const std::string& suite_file, const std::string& tile_space) {
  const std::filesystem::path folder = std::filesystem::path(suite_file).parent_path();
  return (folder / tile_space).lexically_normal().string();
}

std::string config_hash_bytes(const std::string& path) {
  std::string bytes = read_text_file(path, "the config file");
  const json cfg = read_json_file(path, "the config file");
  if (cfg.is_object() && cfg.contains("tile_space") && cfg["tile_space"].is_string())
    bytes += read_text_file(tile_space_path(path, cfg["tile_space"].get<std::string>()),
                            "the tile space file");
  return bytes;
}

bool KernelFamily::operator<(const KernelFamily& o) const {
  return std::tie(dtype, out_dtype, depth, group, kv, mask, has_sink, multi_token) <
         std::tie(o.dtype, o.out_dtype, o.depth, o.group, o.kv, o.mask, o.has_sink, o.multi_token);
}
bool KernelFamily::operator==(const KernelFamily& o) const { return !(*this < o) && !(o < *this); }

KernelFamily family_of(const KernelTraits& t) {
  return {t.dtype, t.out_dtype, t.depth, t.group, t.kv, t.mask, t.has_sink, t.multi_token};
}

std::string family_text(const KernelFamily& f) {
  return fmt::format("{}->{} d{} g{} {} {}{}{}", f.dtype, f.out_dtype, f.depth, f.group, f.kv,
                     f.mask, f.has_sink ? " sink" : "", f.multi_token ? " multi-token" : "");
}

std::vector<ConfigFamily> validate_config(const json& cfg, const std::string& file,
                                          const char* schema_json) {
  const Schema schema = load_schema(schema_json ? schema_json : config_schema_json());
  const Checker c{file, schema};
  if (!cfg.is_object())
    c.fail("(top level)", fmt::format("wrong type {}, expected object", type_name(cfg)));
  c.check_keys(cfg, schema.top_keys, "");
  if (cfg.contains("tile_space"))
    return validate_config(with_tile_space(cfg, file, c, schema_json), file, schema_json);
  const json& version = *c.require(cfg, "schema_version", "");
  if (!version.is_number_integer() || version.get<long long>() != schema.version)
    c.fail("schema_version", fmt::format("value {} not supported (this tool reads {})",
                                         version.dump(), schema.version));
  c.optional_string(cfg, "description", "");
  // As scripts/gen_dispatch.py: past any GPU's 1 MiB, every point would pass, then fail to launch.
  if (cfg.contains("smem_limit_bytes") &&
      c.positive_int(cfg["smem_limit_bytes"], "smem_limit_bytes") > kMaxSmemLimitBytes)
    c.fail("smem_limit_bytes", fmt::format("value {} not allowed (must be <= {}, 1 MiB)",
                                           cfg["smem_limit_bytes"].dump(), kMaxSmemLimitBytes));
  if (cfg.contains("suite"))
    c.check_type(cfg["suite"], cfg["suite"].is_object(), "object", "suite");
  if (cfg.contains("tiles")) c.tiles(cfg["tiles"], "tiles");

  const json& families = *c.require(cfg, "families", "");
  c.check_type(families, families.is_array(), "list", "families");
  if (families.empty()) c.fail("families", "empty list (give at least one family)");
  std::vector<ConfigFamily> out;
  std::set<std::string> names;
  const std::regex name_re("[A-Za-z0-9_]+");
  for (size_t i = 0; i < families.size(); ++i) {
    const json& fam = families[i];
    const std::string fp = fmt::format("families[{}]", i);
    c.check_type(fam, fam.is_object(), "object", fp);
    c.check_keys(fam, schema.family_keys, fp);
    const json& name = *c.require(fam, "name", fp);
    c.check_type(name, name.is_string(), "string", fp + ".name");
    ConfigFamily f;
    f.name = name.get<std::string>();
    if (!std::regex_match(f.name, name_re))
      c.fail(fp + ".name",
             fmt::format("value {} not allowed (letters, digits and '_' only)", name.dump()));
    if (!names.insert(f.name).second)
      c.fail(fp + ".name", fmt::format("duplicate family name {}", name.dump()));
    c.optional_string(fam, "description", fp);
    auto field = [&](const char* key) -> const json& { return *c.require(fam, key, fp); };
    const std::string p = fp + ".";
    f.family.dtype = c.choice(field("dtype"), "dtype", p + "dtype").get<std::string>();
    f.family.out_dtype =
        c.choice(field("out_dtype"), "out_dtype", p + "out_dtype").get<std::string>();
    f.family.depth = c.choice(field("depth"), "depth", p + "depth").get<int>();
    f.family.group = c.positive_int(field("group"), p + "group");
    f.family.kv = c.choice(field("kv"), "kv", p + "kv").get<std::string>();
    f.family.mask = c.choice(field("mask"), "mask", p + "mask").get<std::string>();
    f.family.has_sink = c.boolean(field("sink"), p + "sink");
    if (fam.contains("multi_token"))
      f.family.multi_token = c.boolean(fam["multi_token"], p + "multi_token");
    if (f.family.mask == "tree" && !f.family.multi_token)
      c.fail(p + "mask",
             "value \"tree\" needs \"multi_token\": true (a tree of one token is the causal "
             "mask)");
    if (fam.contains("tiles"))
      c.tiles(fam["tiles"], p + "tiles");
    else if (!cfg.contains("tiles"))
      c.fail(p + "tiles", "missing (and no top-level \"tiles\" to inherit)");
    out.push_back(f);
  }
  return out;
}

std::vector<ConfigFamily> read_config_families(const std::string& path) {
  return validate_config(read_json_file(path, "the config file"), path);
}

std::string warn_config_build_mismatch(const std::string& config_path,
                                       const std::vector<ConfigFamily>& families,
                                       const std::vector<KernelEntry>& compiled) {
  std::set<KernelFamily> built;
  for (const KernelEntry& k : compiled) built.insert(family_of(k.traits));
  std::set<KernelFamily> wanted;
  std::vector<std::string> missing, extra;
  for (const ConfigFamily& f : families) {
    wanted.insert(f.family);
    if (!built.count(f.family)) missing.push_back(f.name + " (" + family_text(f.family) + ")");
  }
  for (const KernelFamily& f : built)
    if (!wanted.count(f)) extra.push_back(family_text(f));
  if (missing.empty() && extra.empty()) return "";
  std::string text = fmt::format(
      "warning: {}: its families differ from this build's kernels (built from {}); --config "
      "chooses the problems, the build chooses the kernels",
      config_path, built_config_label());
  if (!missing.empty()) text += fmt::format("\n  not compiled: {}", join(missing, ", "));
  if (!extra.empty()) text += fmt::format("\n  compiled, not in the config: {}", join(extra, ", "));
  text += fmt::format(
      "\n  to sweep this config's kernels, build it: ./scripts/sweep.sh --config {} (or cmake "
      "-DMHA_CONFIG={})\n",
      config_path, config_path);
  std::fputs(text.c_str(), stderr);
  return text;
}

}  // namespace mha
