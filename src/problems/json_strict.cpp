// A SAX pass over a JSON text: a stack of the keys seen per open object, to find duplicates and
// excessive depth before the tree is built.
#include "problems/json_strict.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "common/errors.h"

namespace mha {
namespace {

using json = nlohmann::json;

struct StrictSax : nlohmann::json_sax<json> {
  std::string origin;
  // One entry per open container: its key set (objects only) and its path for messages.
  struct Level {
    bool is_object = false;
    std::set<std::string> keys;
    std::string path;
    size_t index = 0;  // next element of an array
  };
  std::vector<Level> stack;
  std::string pending_key;

  // The path of the value about to open, e.g. "problems[2].keys".
  std::string child_path() {
    if (stack.empty()) return "(top level)";
    Level& top = stack.back();
    const std::string base = top.path == "(top level)" ? "" : top.path;
    if (top.is_object) return base.empty() ? pending_key : base + "." + pending_key;
    return fmt::format("{}[{}]", base, top.index++);
  }
  void value() {
    if (!stack.empty() && !stack.back().is_object) ++stack.back().index;
  }
  bool open(bool is_object) {
    Level level;
    level.is_object = is_object;
    level.path = child_path();
    if (static_cast<int>(stack.size()) >= kMaxJsonDepth)
      throw UsageError(fmt::format("{}: nesting deeper than {} levels at {}", origin, kMaxJsonDepth,
                                   level.path));
    stack.push_back(std::move(level));
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }

  bool null() override { return value(), true; }
  bool boolean(bool) override { return value(), true; }
  bool number_integer(number_integer_t) override { return value(), true; }
  bool number_unsigned(number_unsigned_t) override { return value(), true; }
  bool number_float(number_float_t, const string_t&) override { return value(), true; }
  bool string(string_t&) override { return value(), true; }
  bool binary(binary_t&) override { return value(), true; }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Level& top = stack.back();
    if (!top.keys.insert(k).second) {
      const std::string where = top.path == "(top level)" ? "" : top.path + ": ";
      throw UsageError(fmt::format(
          "{}: {}duplicate key '{}' (a JSON parser would keep only the last)", origin, where, k));
    }
    pending_key = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;  // the real parse that follows reports it
  }
};

}  // namespace

void check_json_strict(const std::string& text, const std::string& origin) {
  StrictSax sax;
  sax.origin = origin;
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception&) {
    // A number out of range ("1e400") throws here; the parser that runs next reports it.
  }
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open " + what);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_text_file(path, what);
  check_json_strict(text, path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    throw UsageError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace mha
