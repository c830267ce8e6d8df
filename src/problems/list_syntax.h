// The list syntax of inline specs and CLI lists: integers separated by ':', optionally in
// brackets, where a step token turns the two numbers before it into an inclusive range:
//   512:131072:x4     512, 2048, 8192, 32768, 131072   (multiply by 4)
//   [512:131072:pow2] every power of two from 512 to 131072 (nvbench's [..:pow2] idea)
//   1000:2000:+250    1000, 1250, 1500, 1750, 2000     (add 250)
// A list with no step token is a plain list ("1:8" is 1 and 8, not a range), so lists written
// before ranges existed keep their meaning. Words (a letter, then letters or digits) such as
// "auto" or "cluster4" pass through untouched.
#pragma once

#include <string>
#include <vector>

namespace mha {

// The most values one range may expand to: a typo such as 1:2000000000:+1 fails fast instead of
// filling memory.
constexpr int kMaxRangeValues = 4096;

// One item of an expanded list: a number, or a word the caller interprets (e.g. "auto").
struct ListItem {
  bool is_word = false;
  long long value = 0;
  std::string word;
};

// Expands `text`. `what` names the list in messages ("--problem \"...\": key 'keys'"). Throws
// UsageError on a malformed item, a step without START:END before it, START > END, a step that
// does not grow, or more than kMaxRangeValues values. Words are items made of letters only.
std::vector<ListItem> expand_list(const std::string& text, const std::string& what);

}  // namespace mha
