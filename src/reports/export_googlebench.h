// A sweep report in Google Benchmark's JSON format ({"context": {...}, "benchmarks": [...]}),
// so that dashboards which ingest Google Benchmark runs can ingest sweeps.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "reports/report_json.h"

namespace mha {

// One benchmark per row, named "<kernel>/<problem>/p<partitions>", with run_type "iteration",
// iterations = timing samples, real_time = cpu_time = the median device time per step in "us"
// (a GPU step has no separate CPU time), and counters bytes_per_second, peak_fraction,
// rel_l2_error, min_us, mean_us, stdev_us, sm_clock_mhz. Rows that did not pass carry
// error_occurred and error_message, as Google Benchmark writes a skipped or failed run.
// Throws UsageError when the report has no row (nothing to ingest).
nlohmann::json googlebench_json(const Report& report, const std::string& report_file);

}  // namespace mha
