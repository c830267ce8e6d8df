// JSON Schema (draft 2020-12) documents of what mha-tune reads and writes, generated from the
// definitions the tool itself uses, so they cannot drift: a sweep report from the row field table
// (row_fields.h) and the metadata writer and reader, a config from the generator's schema that the
// build embeds (config_schema_json). `mha-tune schema report|config` prints them.
#pragma once

#include <nlohmann/json.hpp>

namespace mha {

nlohmann::json report_json_schema();
nlohmann::json config_json_schema();

}  // namespace mha
