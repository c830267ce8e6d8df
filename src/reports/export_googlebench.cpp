// Report -> Google Benchmark JSON (the fields of benchmark's JSONReporter, v1.8).
#include "reports/export_googlebench.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "api/split_plan.h"
#include "common/errors.h"

namespace mha {

namespace {

// JSON has no NaN or infinity; Google Benchmark readers expect numbers, so 0 stands for "none".
double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

}  // namespace

nlohmann::json googlebench_json(const Report& report, const std::string& report_file) {
  if (report.rows.empty())
    throw UsageError(
        fmt::format("{}: rows: the report holds no row; nothing to export", report_file));
  const RunMetadata& m = report.meta;
  const std::string host = m.devices.substr(0, m.devices.find(':'));
  // Google Benchmark's own context keys (CPU facts it measures; zero or empty here: the runs are
  // GPU steps), then the run's identity as custom context strings (AddCustomContext's form).
  nlohmann::json context{
      {"date", m.timestamp},
      {"host_name", host},
      {"executable", "mha-tune"},
      {"num_cpus", 0},
      {"mhz_per_cpu", 0},
      {"cpu_scaling_enabled", false},
      {"caches", nlohmann::json::array()},
      {"load_avg", nlohmann::json::array()},
      {"library_build_type", "release"},
      {"mha_tune_version", m.tool_version},
      {"git_commit", m.git_commit},
      {"gpu_name", m.gpu_name},
      {"sm_count", std::to_string(m.sm_count)},
      {"driver_version", m.driver_version},
      {"cuda_version", m.cuda_version},
      {"peak_read_gbps", fmt::format("{:.1f}", finite_or_zero(m.peak_read_gbps))},
      {"timing_mode", m.timing_mode},
      {"reduce_mode", m.reduce_mode},
      {"cold_cache", m.cold_cache ? "true" : "false"},
      {"config_file", m.config_file},
      {"config_hash", m.config_hash},
      {"command_line", m.command_line},
      {"source_report", report_file}};
  nlohmann::json benchmarks = nlohmann::json::array();
  // Google Benchmark numbers families (a kernel here) and the instances within each.
  std::map<std::string, int> family_index, instances;
  for (const ResultRow& r : report.rows) {
    const std::string name =
        fmt::format("{}/{}/p{}", r.kernel, r.problem.name, split_label(r.partitions));
    const int family =
        family_index.emplace(r.kernel, static_cast<int>(family_index.size())).first->second;
    const bool passed = r.status == Status::kPassed;
    nlohmann::json b{{"name", name},
                     {"family_index", family},
                     {"per_family_instance_index", instances[r.kernel]++},
                     {"run_name", name},
                     {"run_type", "iteration"},
                     {"repetitions", 1},
                     {"repetition_index", 0},
                     {"threads", 1},
                     {"iterations", passed ? r.time.samples : 0},
                     {"real_time", passed ? finite_or_zero(r.time.median_us) : 0.0},
                     {"cpu_time", passed ? finite_or_zero(r.time.median_us) : 0.0},
                     {"time_unit", "us"}};
    if (passed) {
      b["bytes_per_second"] = finite_or_zero(r.achieved_gbps) * 1e9;
      b["peak_fraction"] = finite_or_zero(r.peak_fraction);
      b["rel_l2_error"] = finite_or_zero(r.rel_l2_error);
      b["min_us"] = finite_or_zero(r.time.min_us);
      b["mean_us"] = finite_or_zero(r.time.mean_us);
      b["stdev_us"] = finite_or_zero(r.time.stdev_us);
      b["sm_clock_mhz"] = finite_or_zero(r.sm_clock_mhz);
    } else {
      // As Google Benchmark writes a skipped run: error_occurred only for SkipWithError (a
      // failure); a point this GPU or build cannot run is a SkipWithMessage.
      const bool skipped = r.status == Status::kNotSupported || r.status == Status::kSkipped;
      b["error_occurred"] = !skipped;
      b["error_message"] =
          fmt::format("{}{}{}", status_name(r.status), r.reason.empty() ? "" : ": ", r.reason);
    }
    benchmarks.push_back(std::move(b));
  }
  return {{"context", context}, {"benchmarks", benchmarks}};
}

}  // namespace mha
