// Expanding ':' lists with x/+/pow2 range steps (grammar in list_syntax.h).
#include "problems/list_syntax.h"

#include <fmt/format.h>

#include <cctype>
#include <sstream>

#include "common/errors.h"

namespace mha {
namespace {

// A letter, then letters or digits ("auto", "cluster4"); range steps ("x4") are matched first.
bool is_word(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  return true;
}

bool parse_ll(const std::string& s, long long* out) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+'))
    return false;
  try {
    size_t used = 0;
    *out = std::stoll(s, &used);
    return used == s.size();
  } catch (const std::exception&) {
    return false;
  }
}

enum class StepKind { kNone, kMultiply, kAdd, kPow2 };

// "x4" -> multiply by 4, "+256" -> add 256, "pow2"; kNone for anything else.
StepKind step_kind(const std::string& s, long long* step, const std::string& what) {
  if (s == "pow2") return StepKind::kPow2;
  if (s.rfind("pow", 0) == 0)  // a mistyped step, not a word
    throw UsageError(fmt::format("{}: range step '{}': the power step is pow2", what, s));
  if (s.size() < 2 || (s[0] != 'x' && s[0] != '+')) return StepKind::kNone;
  const std::string digits = s.substr(1);
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return StepKind::kNone;
  if (!parse_ll(digits, step))
    throw UsageError(fmt::format("{}: range step '{}' is out of range", what, s));
  if (s[0] == 'x' && *step < 2)
    throw UsageError(fmt::format("{}: range step '{}' must multiply by at least 2", what, s));
  if (s[0] == '+' && *step < 1)
    throw UsageError(fmt::format("{}: range step '{}' must add at least 1", what, s));
  return s[0] == 'x' ? StepKind::kMultiply : StepKind::kAdd;
}

}  // namespace

std::vector<ListItem> expand_list(const std::string& text, const std::string& what) {
  std::string body = text;
  if (!body.empty() && body.front() == '[') {
    if (body.size() < 2 || body.back() != ']')
      throw UsageError(fmt::format("{}: '{}' opens '[' without a closing ']'", what, text));
    body = body.substr(1, body.size() - 2);
  }
  std::vector<std::string> tokens;
  std::stringstream in(body);
  for (std::string t; std::getline(in, t, ':');) tokens.push_back(t);
  if (!body.empty() && body.back() == ':') tokens.push_back("");

  std::vector<ListItem> out;
  // How many of the items at the end of `out` are plain numbers that a step may still take.
  size_t open_numbers = 0;
  for (const std::string& t : tokens) {
    long long step = 0;
    const StepKind kind = step_kind(t, &step, what);
    if (kind != StepKind::kNone) {
      if (open_numbers < 2)
        throw UsageError(fmt::format(
            "{}: range step '{}' needs START:END before it, e.g. 512:131072:{}", what, t, t));
      const long long end = out.back().value;
      out.pop_back();
      const long long start = out.back().value;
      out.pop_back();
      if (start < 1 || start > end)
        throw UsageError(
            fmt::format("{}: range {}:{}:{} needs 1 <= START <= END", what, start, end, t));
      std::vector<long long> values;
      if (kind == StepKind::kPow2) {
        for (long long v = 1; v <= end; v *= 2) {
          if (v >= start) values.push_back(v);
          if (v > end / 2) break;  // doubling again would pass END (or overflow, from 2^62 on)
        }
        if (values.empty())
          throw UsageError(
              fmt::format("{}: range {}:{}:pow2 holds no power of two", what, start, end));
      } else {
        for (long long v = start; v <= end; v = kind == StepKind::kMultiply ? v * step : v + step) {
          values.push_back(v);
          if (values.size() > static_cast<size_t>(kMaxRangeValues)) break;
          // The next value would overflow: it would pass END anyway.
          if (kind == StepKind::kMultiply ? v > end / step : v > end - step) break;
        }
      }
      if (values.size() > static_cast<size_t>(kMaxRangeValues))
        throw UsageError(fmt::format("{}: range {}:{}:{} has more than {} values", what, start, end,
                                     t, kMaxRangeValues));
      for (long long v : values) out.push_back({false, v, ""});
      open_numbers = 0;  // a range's values are not a START:END for the next step
      continue;
    }
    ListItem item;
    if (is_word(t)) {
      item.is_word = true;
      item.word = t;
      open_numbers = 0;
    } else if (parse_ll(t, &item.value)) {
      ++open_numbers;
    } else {
      throw UsageError(fmt::format(
          "{}: '{}' is not an integer, a range step (x4, +256, pow2) or a word", what, t));
    }
    out.push_back(item);
  }
  if (out.empty()) throw UsageError(fmt::format("{}: empty list", what));
  return out;
}

}  // namespace mha
