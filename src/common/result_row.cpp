// Disposition names of ResultRow::status, as they appear in reports, journals and CSV files.
#include "common/result_row.h"

#include <stdexcept>

namespace mha {

const char* status_name(Status s) {
  switch (s) {
    case Status::kPassed:
      return "passed";
    case Status::kIncorrect:
      return "incorrect";
    case Status::kFailed:
      return "failed";
    case Status::kNotSupported:
      return "not_supported";
    case Status::kSkipped:
      return "skipped";
  }
  return "unknown";
}

Status status_from_name(const std::string& s) {
  if (s == "passed") return Status::kPassed;
  if (s == "incorrect") return Status::kIncorrect;
  if (s == "failed") return Status::kFailed;
  if (s == "not_supported") return Status::kNotSupported;
  if (s == "skipped") return Status::kSkipped;
  throw std::invalid_argument("unknown status '" + s +
                              "' (expected passed, incorrect, failed, not_supported, skipped)");
}

std::string point_key(const std::string& kernel, const std::string& problem_name, int partitions) {
  return kernel + "|" + problem_name + "|p" + std::to_string(partitions);
}

std::string point_key(const ResultRow& row) {
  return point_key(row.kernel, row.problem.name, row.partitions);
}

}  // namespace mha
