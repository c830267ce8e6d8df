// Checks a JSON text for what nlohmann::json::parse accepts silently but an input file must not
// have: a key given twice in one object (the parser keeps the last, so the first vanishes) and
// nesting deeper than any mha-tune file needs (dump() and the readers recurse; a hostile depth
// would overflow the stack).
#pragma once

#include <string>

namespace mha {

constexpr int kMaxJsonDepth = 64;

// Throws UsageError "<origin>: <path>: duplicate key 'k'" or "<origin>: nesting deeper than 64
// levels at <path>". Syntax errors are left to the parser that runs next (it names the byte).
void check_json_strict(const std::string& text, const std::string& origin);

}  // namespace mha
