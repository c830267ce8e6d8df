// The optional samples sidecar of a sweep (`sweep --samples`): every timed point's samples, so
// that `compare --samples` can test each pair for a shift (rank_test.h) beside its effect size.
// PREFIX.samples.jsonl beside PREFIX.json, one JSON object a line:
//   {"point": "<point key>", "samples_us": [12.31, 12.29, ...]}
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mha {

using SamplesByPoint = std::map<std::string, std::vector<double>>;

// The sidecar of a report: PREFIX.samples.jsonl for PREFIX.json (or for any other name, NAME +
// ".samples.jsonl").
std::string samples_path_for(const std::string& report_path);

// One line of the sidecar, newline included.
std::string samples_line(const std::string& point_key, const std::vector<double>& samples_us);

// Reads a sidecar. Throws UsageError naming the file and line for a line that is not such an
// object, a sample that is not a finite positive number, more than kMaxSamplesPerPoint samples,
// or a point given twice (a resumed sweep appends; one point is timed once).
constexpr size_t kMaxSamplesPerPoint = 100000;
SamplesByPoint read_samples_file(const std::string& path);

// A sweep killed while writing a line leaves it unfinished: before a resume appends, the file is
// cut back to its last whole line. Returns whether it cut; throws UsageError when it cannot.
bool cut_partial_last_line(const std::string& path);

}  // namespace mha
