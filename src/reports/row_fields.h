// The fields of a result row, each written down once: where it sits in a JSON row (the row
// itself or one of its objects), its JSON key, its CSV column, and how to get and set it. The
// JSON writer and reader (report_json.cpp) and the CSV writer (report_csv.cpp) walk this table,
// so a new field is one entry here, in the CSV's column order.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "common/result_row.h"

namespace mha {

enum class FieldKind { kInt, kDouble, kString, kBool };
using FieldValue = std::variant<long long, double, std::string, bool>;

struct RowField {
  const char* object;  // "" (the row), "traits", "problem" or "time"
  const char* key;     // its JSON key
  const char* column;  // its CSV column; nullptr: JSON only
  FieldKind kind;
  FieldValue (*get)(const ResultRow&);
  // nullptr: derived from other fields, written but never read back. May throw
  // std::invalid_argument for a value out of its domain (the reader names the key).
  void (*set)(ResultRow&, const FieldValue&);
  bool optional;  // may be absent: reports written before the field existed
  // JSON rows leave it out while it holds its default (a field of a kind of problem most rows are
  // not, such as several query tokens): the rows of everything else read as before.
  bool omitted_at_default = false;
};

const std::vector<RowField>& row_fields();

}  // namespace mha
