// The report and config schemas, built from the tool's own tables.
#include "reports/json_schema.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "registry/kernel_registry.h"
#include "reports/report_json.h"
#include "reports/row_fields.h"

namespace mha {

namespace {

using json = nlohmann::json;

const char* const kDraft = "https://json-schema.org/draft/2020-12/schema";

// A double as the writer writes it: a number, or the text of a non-finite one.
json double_schema() {
  return {{"anyOf", json::array({{{"type", "number"}}, {{"enum", {"nan", "inf", "-inf"}}}})}};
}

json kind_schema(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInt:
      return {{"type", "integer"}};
    case FieldKind::kDouble:
      return double_schema();
    case FieldKind::kString:
      return {{"type", "string"}};
    case FieldKind::kBool:
      return {{"type", "boolean"}};
  }
  return json::object();
}

json closed_object() {
  return {{"type", "object"},
          {"properties", json::object()},
          {"required", json::array()},
          {"additionalProperties", false}};
}

// One row: its own fields and its traits, problem and time objects, from the field table.
json row_schema() {
  json row = closed_object();
  for (const char* object : {"traits", "problem", "time"}) {
    row["properties"][object] = closed_object();
    row["required"].push_back(object);
  }
  for (const RowField& f : row_fields()) {
    json& target = f.object[0] == '\0' ? row : row["properties"][f.object];
    target["properties"][f.key] = kind_schema(f.kind);
    if (!f.optional && f.set != nullptr) target["required"].push_back(f.key);
  }
  // Ragged batches also carry every length and their total (to_json_value).
  json& problem = row["properties"]["problem"]["properties"];
  problem["ragged_lengths"] = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}};
  problem["total_keys"] = {{"type", "integer"}, {"minimum", 0}};
  return row;
}

// The metadata the writer writes, typed by what it wrote for an empty run; required where the
// reader refuses a metadata object without the key.
json metadata_schema() {
  const json written = to_json_value(RunMetadata{});
  json meta = closed_object();
  // Open: the reader takes what it knows and other tools add their own (peers.py's peer_packages).
  meta["additionalProperties"] = true;
  for (const auto& [key, value] : written.items()) {
    meta["properties"][key] = value.is_boolean()          ? json{{"type", "boolean"}}
                              : value.is_number_integer() ? json{{"type", "integer"}}
                              : value.is_number()         ? double_schema()
                                                          : json{{"type", "string"}};
    json without = written;
    without.erase(key);
    try {
      metadata_from_json(without, "schema");
    } catch (const std::exception&) {
      meta["required"].push_back(key);
    }
  }
  return meta;
}

}  // namespace

json report_json_schema() {
  json s = closed_object();
  s["$schema"] = kDraft;
  s["title"] = "mha-tune sweep report";
  s["properties"]["schema_version"] = {{"const", kReportSchemaVersion}};
  s["properties"]["metadata"] = metadata_schema();
  s["properties"]["rows"] = {{"type", "array"}, {"items", row_schema()}};
  s["required"] = {"schema_version", "metadata", "rows"};
  return s;
}

json config_json_schema() {
  const json d = json::parse(config_schema_json());
  const json& choices = d["choices"];
  // A tile axis takes one value or a list of them (the generator sweeps the product).
  auto one_or_many = [](const json& one) {
    return json{
        {"anyOf", json::array({one, {{"type", "array"}, {"items", one}, {"minItems", 1}}})}};
  };
  json tile = closed_object();
  for (const auto& axis : d["tile_axes"]) {
    const std::string name = axis.get<std::string>();
    tile["properties"][name] =
        one_or_many(name == "warp_split_k" ? json{{"type", "boolean"}}
                                           : json{{"type", "integer"}, {"minimum", 1}});
  }
  const json tiles = {
      {"anyOf", json::array({tile, {{"type", "array"}, {"items", tile}, {"minItems", 1}}})}};
  json family = closed_object();
  for (const auto& key : d["family_keys"]) {
    const std::string name = key.get<std::string>();
    json& p = family["properties"][name];
    if (choices.contains(name))
      p = {{"enum", choices[name]}};
    else if (name == "name")
      p = {{"type", "string"}, {"pattern", "^[A-Za-z0-9_]+$"}};
    else if (name == "description")
      p = {{"type", "string"}};
    else if (name == "group")
      p = {{"type", "integer"}, {"minimum", 1}};
    else if (name == "sink" || name == "soft_cap" || name == "multi_token")
      p = {{"type", "boolean"}};
    else if (name == "tiles")
      p = tiles;
  }
  family["required"] = d["family_required"];
  json s = closed_object();
  s["$schema"] = kDraft;
  s["title"] = "mha-tune config (tile spaces and a problem suite)";
  for (const auto& key : d["top_keys"]) {
    const std::string name = key.get<std::string>();
    json& p = s["properties"][name];
    if (name == "schema_version")
      p = {{"const", d["schema_version"]}};
    else if (name == "description")
      p = {{"type", "string"}};
    else if (name == "smem_limit_bytes")
      p = {{"type", "integer"}, {"minimum", 1}, {"maximum", 1 << 20}};
    else if (name == "tiles")
      p = tiles;
    else if (name == "families")
      p = {{"type", "array"}, {"items", family}, {"minItems", 1}};
    else if (name == "suite")  // problem specs: mha-tune reads them key by key (README)
      p = {{"type", "object"}};
    else if (name == "tile_space")  // a path; its file is checked when the suite is loaded
      p = {{"type", "string"}};
  }
  // A suite naming its tile space has none of the keys that file gives, so not "families" either.
  json given = json::array();
  for (const auto& key : d["tile_space_keys"]) given.push_back({{"required", json::array({key})}});
  json required = json::array();
  for (const auto& key : d["top_required"])
    if (std::find(d["tile_space_keys"].begin(), d["tile_space_keys"].end(), key) ==
        d["tile_space_keys"].end())
      required.push_back(key);
  s["if"] = {{"required", json::array({"tile_space"})}};
  s["then"] = {{"required", required}, {"not", {{"anyOf", given}}}};
  s["else"] = {{"required", d["top_required"]}};
  return s;
}

}  // namespace mha
