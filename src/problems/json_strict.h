// Checks a JSON text for what nlohmann::json::parse accepts silently but an input file must not
// have: a key given twice in one object (the parser keeps the last, so the first vanishes) and
// nesting deeper than any mha-tune file needs (dump() and the readers recurse; a hostile depth
// would overflow the stack). And the readers every input file goes through (problems, configs,
// reports, defaults), so that the first stage reads files without the reports' code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mha {

constexpr int kMaxJsonDepth = 64;

// Throws UsageError "<origin>: <path>: duplicate key 'k'" or "<origin>: nesting deeper than 64
// levels at <path>". Syntax errors are left to the parser that runs next (it names the byte).
void check_json_strict(const std::string& text, const std::string& origin);

// The whole file; throws UsageError "<path>: cannot open <what>" when it cannot be read.
std::string read_text_file(const std::string& path, const std::string& what);
// The file parsed as JSON; throws UsageError naming the file when it cannot be read or parsed.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace mha
