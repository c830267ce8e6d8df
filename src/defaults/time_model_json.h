// The time model's parameters as JSON: select's --out-json "time_model" and the defaults table's
// "time_model", which the library reads back to choose with the model at run time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "defaults/time_model_params.h"

namespace mha {

nlohmann::json time_model_to_json(const TimeModel& model);
// Throws std::invalid_argument naming `where` and the key that is wrong.
TimeModel time_model_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace mha
