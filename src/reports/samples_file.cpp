// The samples sidecar: one point a line, written as points finish, read whole by compare.
#include "reports/samples_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.h"
#include "reports/report_json.h"

namespace mha {

std::string samples_path_for(const std::string& report_path) {
  const std::string suffix = ".json";
  const bool is_json =
      report_path.size() > suffix.size() &&
      report_path.compare(report_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (is_json ? report_path.substr(0, report_path.size() - suffix.size()) : report_path) +
         ".samples.jsonl";
}

std::string samples_line(const std::string& point_key, const std::vector<double>& samples_us) {
  return nlohmann::json{{"point", point_key}, {"samples_us", samples_us}}.dump() + "\n";
}

SamplesByPoint read_samples_file(const std::string& path) {
  std::istringstream in(read_text_file(path, "the samples sidecar (sweep --samples writes it)"));
  SamplesByPoint out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      throw UsageError(where +
                       ": not a JSON object (a sidecar line is {\"point\", \"samples_us\"})");
    }
    if (!j.is_object() || !j.contains("point") || !j["point"].is_string() ||
        !j.contains("samples_us") || !j["samples_us"].is_array())
      throw UsageError(where + ": needs a string \"point\" and an array \"samples_us\"");
    const auto& values = j["samples_us"];
    if (values.size() > kMaxSamplesPerPoint)
      throw UsageError(fmt::format("{}: {} samples, more than the {} a point can have", where,
                                   values.size(), kMaxSamplesPerPoint));
    std::vector<double> samples;
    samples.reserve(values.size());
    for (const auto& v : values) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
        throw UsageError(where + ": a sample is not a finite positive number of microseconds");
      samples.push_back(v.get<double>());
    }
    const std::string key = j["point"].get<std::string>();
    if (!out.emplace(key, std::move(samples)).second)
      throw UsageError(fmt::format("{}: point '{}' given twice", where, key));
  }
  return out;
}

bool cut_partial_last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;  // nothing written yet
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty() || text.back() == '\n') return false;
  const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
    throw UsageError(
        fmt::format("{}: cannot cut the unfinished last line: {}", path, std::strerror(errno)));
  return true;
}

}  // namespace mha
