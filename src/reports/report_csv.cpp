// CSV report writer with RFC 4180 quoting.
#include "reports/report_csv.h"

#include <fmt/format.h>

#include "reports/report_json.h"
#include "reports/row_fields.h"

namespace mha {

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_escape(fields[i]);
  }
  line += '\n';
  return line;
}

std::vector<std::string> report_csv_columns() {
  std::vector<std::string> columns;
  for (const RowField& f : row_fields())
    if (f.column != nullptr) columns.push_back(f.column);
  return columns;
}

std::vector<std::string> report_csv_fields(const ResultRow& r) {
  std::vector<std::string> fields;
  for (const RowField& f : row_fields()) {
    if (f.column == nullptr) continue;
    const FieldValue v = f.get(r);
    switch (f.kind) {
      case FieldKind::kInt:
        fields.push_back(std::to_string(std::get<long long>(v)));
        break;
      case FieldKind::kDouble:
        fields.push_back(fmt::format("{}", std::get<double>(v)));
        break;
      case FieldKind::kString:
        fields.push_back(std::get<std::string>(v));
        break;
      case FieldKind::kBool:
        fields.push_back(std::get<bool>(v) ? "1" : "0");
        break;
    }
  }
  return fields;
}

std::string report_to_csv(const std::vector<ResultRow>& rows) {
  std::string text = csv_line(report_csv_columns());
  for (const ResultRow& r : rows) text += csv_line(report_csv_fields(r));
  return text;
}

void write_report_csv(const std::string& path, const std::vector<ResultRow>& rows) {
  write_text_file_atomic(path, report_to_csv(rows));
}

}  // namespace mha
