// `mha-tune sweep`: every selected kernel over a problem suite and every partition count asked
// for; each point verified, then timed (DESIGN.md "Measurement"), journaled as it finishes, and
// written as JSON and CSV reports at the end (or on a sticky error, after the journal is flushed).
#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bandwidth_probe.h"
#include "commands.h"
#include "device_info.h"
#include "errors.h"
#include "gpu_monitor.h"
#include "journal.h"
#include "kernel_selection.h"
#include "point_runner.h"
#include "problem.h"
#include "reference.h"
#include "report_csv.h"
#include "report_json.h"
#include "select.h"
#include "step_timer.h"

namespace mha {


namespace {

// Ctrl-C (or SIGTERM) asks the sweep to stop after the point in flight: the journal and reports
// then hold every finished point and --resume continues. A second Ctrl-C kills as usual.
std::atomic<bool> g_stop_requested{false};
extern "C" void request_stop(int signal_number) {
  g_stop_requested = true;
  std::signal(signal_number, SIG_DFL);
}

struct SweepOptions {
  std::string config, problems_file, out_prefix, timing = "graph", partitions, reduce = "fused";
  std::vector<std::string> filters, problem_specs;
  bool resume = false, quiet = false, warm = false, dry_run = false;
  int device = 0;
  uint64_t seed = 1;
  double time_budget_s = 0.25, target_error = 0.005;
  std::string command_line;
};

std::string fnv1a_hex(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot open", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, format, std::gmtime(&t));
  return buf;
}

std::string slug(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
  return s;
}

// A problem with the kernels that compute it (problems of one family share data and reference).
struct WorkItem {
  Problem problem;
  std::vector<const KernelEntry*> kernels;
};

std::vector<WorkItem> plan_work(const std::vector<ProblemSpec>& specs,
                                const std::vector<const KernelEntry*>& kernels,
                                const SweepOptions& o, int sm_count) {
  std::optional<ProblemSpec> override_spec;
  if (!o.partitions.empty()) {
    override_spec = parse_problem_spec("partitions=" + o.partitions);
    override_spec->origin = "--partitions";
  }
  std::vector<WorkItem> work;
  std::map<std::string, size_t> index;
  for (const auto& spec : specs)
    for (const KernelEntry* k : kernels) {
      std::string why;
      for (Problem p : instantiate(spec, k->traits, &why)) {
        p.seed = o.seed;
        if (override_spec) {
          p.partitions = override_spec->partitions;
          p.partitions_auto = override_spec->partitions_auto;
        }
        if (p.partitions_auto) {
          const int units = p.shape.batch * p.shape.kv_heads;
          p.partitions.push_back(auto_partitions(default_partition_rule(), sm_count, units, p.shape.keys));
          std::sort(p.partitions.begin(), p.partitions.end());
          p.partitions.erase(std::unique(p.partitions.begin(), p.partitions.end()), p.partitions.end());
        }
        auto [it, inserted] = index.emplace(p.shape.name, work.size());
        if (inserted) work.push_back({p, {}});
        work[it->second].kernels.push_back(k);
      }
    }
  return work;
}

ResultRow point_row(const KernelEntry& k, const Problem& p, int partitions, int device) {
  ResultRow row;
  row.kernel = k.name;
  row.traits = k.traits;
  row.problem = p.shape;
  row.partitions = partitions;
  row.device = device;
  return row;
}

void write_reports(const std::string& prefix, const Journal& journal) {
  write_report_json(prefix + ".json", journal.meta(), journal.rows());
  write_report_csv(prefix + ".csv", journal.rows());
}

// The best passed row of each problem, as a table.
void print_best_table(const std::vector<ResultRow>& rows) {
  std::map<std::string, const ResultRow*> best;
  for (const auto& r : rows) {
    if (r.status != Status::kPassed) continue;
    auto& b = best[r.problem.name];
    if (!b || r.time.median_us < b->time.median_us) b = &r;
  }
  fmt::print("\nBest configuration per problem:\n{:<40} {:>9} {:>9} {:>7} {:>4}  {}\n", "problem",
             "us", "GB/s", "%peak", "P", "kernel");
  for (const auto& [name, r] : best)
    fmt::print("{:<40} {:>9.2f} {:>9.0f} {:>6.1f}% {:>4}  {}\n", name, r->time.median_us,
               r->achieved_gbps, 100 * r->peak_fraction, r->partitions, r->kernel);
}

int run_sweep(const SweepOptions& o) {
  const auto kernels = select_kernels(o.filters);
  std::vector<ProblemSpec> specs;
  for (const auto& text : o.problem_specs) specs.push_back(parse_problem_spec(text));
  if (!o.problems_file.empty())
    for (auto& s : read_problem_file(o.problems_file)) specs.push_back(s);
  if (specs.empty() && !o.config.empty()) specs = read_problem_file(o.config);
  if (specs.empty())
    throw UsageError("sweep: no problems: give --problem, --problems FILE or a --config with a \"suite\"");
  const ReduceMode reduce = reduce_mode_from_name(o.reduce);
  if (o.timing != "graph" && o.timing != "stream")
    throw UsageError(fmt::format("--timing: '{}' is not one of graph, stream", o.timing));

  if (o.dry_run) {  // the plan only: no GPU needed; "auto" resolved for an H200's 132 SMs
    const auto work = plan_work(specs, kernels, o, 132);
    size_t points = 0;
    for (const auto& w : work) {
      points += w.kernels.size() * w.problem.partitions.size();
      std::string parts;
      for (int p : w.problem.partitions) parts += fmt::format("{}{}", parts.empty() ? "" : ",", p);
      fmt::print("{:<44} {:>3} kernel(s) x partitions {}\n", w.problem.shape.name, w.kernels.size(), parts);
    }
    fmt::print("{} problem(s), {} point(s)\n", work.size(), points);
    return kExitOk;
  }
  require_device(o.device);
  const DeviceProps props = device_props(o.device);
  const std::string prefix = !o.out_prefix.empty()
                                 ? o.out_prefix
                                 : fmt::format("results/{}_{}", slug(props.name), utc_now("%Y-%m-%d"));
  std::filesystem::create_directories(std::filesystem::path(prefix).parent_path().empty()
                                          ? "."
                                          : std::filesystem::path(prefix).parent_path());
  const std::string journal_path = prefix + ".journal.jsonl";

  std::optional<Journal> journal;
  if (o.resume) {
    journal.emplace(Journal::open_resume(journal_path));
    if (!o.quiet) fmt::print("resuming {}: {} point(s) already measured\n", journal_path, journal->rows().size());
  } else {
    RunMetadata meta;
    meta.tool_version = tool_version();
    meta.git_commit = tool_git_commit();
    describe_device(o.device, meta);
    meta.timestamp = utc_now("%Y-%m-%dT%H:%M:%SZ");
    meta.config_file = o.config;
    meta.config_hash = o.config.empty() ? "" : fnv1a_hex(read_file(o.config));
    meta.command_line = o.command_line;
    meta.seed = o.seed;
    meta.timing_mode = o.timing + (o.reduce == "separate" ? "+separate_reduce" : "");
    meta.cold_cache = !o.warm;
    if (!o.quiet) fmt::print("measuring the peak read bandwidth of {} ...\n", props.name);
    meta.peak_read_gbps = measure_peak_read_gbps();
    if (!o.quiet) fmt::print("peak read bandwidth: {:.0f} GB/s\n", meta.peak_read_gbps);
    journal.emplace(Journal::open_new(journal_path, meta));
  }
  const double peak_gbps = journal->meta().peak_read_gbps;

  const auto work = plan_work(specs, kernels, o, props.sm_count);
  size_t total = 0;
  for (const auto& w : work) total += w.kernels.size() * w.problem.partitions.size();
  if (total == 0) throw UsageError("sweep: no selected kernel computes any problem of the suite");

  TimingOptions timing;
  timing.use_graph = o.timing == "graph";
  timing.stop.time_budget_s = o.time_budget_s;
  timing.stop.target_relative_error = o.target_error;
  GpuMonitor monitor(o.device);
  cudaStream_t stream;
  MHA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  const auto t0 = std::chrono::steady_clock::now();
  size_t position = 0, measured_now = 0;
  int incorrect = 0;
  for (const auto& item : work) {
    const Problem& problem = item.problem;
    double best_us = 0;
    std::string best_name;
    std::unique_ptr<ProblemData> data;
    std::vector<double> ref;
    for (const KernelEntry* k : item.kernels) {
      for (int partitions : problem.partitions) {
        ++position;
        if (g_stop_requested) break;
        ResultRow row = point_row(*k, problem, partitions, o.device);
        const std::string key = point_key(row);
        if (journal->done_keys().count(key)) continue;
        if (journal->crashed_keys().count(key)) {
          journal->append_row(crashed_row(row));
          continue;
        }
        journal->append_started(row);
        const std::string range = fmt::format("{} | {} | p{}", k->name, problem.shape.name, partitions);
        nvtxRangePushA(range.c_str());
        try {
          if (!data) {
            const int copies = o.warm ? 1 : rotation_copies(copy_bytes(problem), props.l2_bytes);
            data = std::make_unique<ProblemData>(problem, copies);
            ref = reference_output(problem, *data);
          }
          const VerifyOutcome v = verify_point(*k, problem, *data, partitions, ref, reduce);
          row.status = v.status;
          row.reason = v.reason;
          row.rel_l2_error = v.error.rel_l2;
          row.max_abs_error = v.error.max_abs;
          row.bytes = step_bytes(problem, partitions);
          if (v.status == Status::kPassed) {
            StepBuffers buffers(problem, partitions, reduce);
            const TimingResult t = time_step(*k, *data, partitions, buffers, timing, stream);
            const ClockReading clock = monitor.read();
            row.time = t.stats;
            row.achieved_gbps = row.bytes / (t.stats.median_us * 1e-6) / 1e9;
            row.peak_fraction = peak_gbps > 0 ? row.achieved_gbps / peak_gbps : 0;
            row.sm_clock_mhz = clock.sm_clock_mhz;
            row.throttled = clock.throttled;
            if (best_us == 0 || row.time.median_us < best_us) {
              best_us = row.time.median_us;
              best_name = fmt::format("{} p{}", k->name, partitions);
            }
          } else if (v.status == Status::kIncorrect) {
            ++incorrect;
          }
        } catch (const CudaError& e) {
          nvtxRangePop();
          if (e.is_sticky() || e.code == cudaErrorNoDevice) {
            row.status = Status::kFailed;
            row.reason = e.what();
            journal->append_row(row);
            write_reports(prefix, *journal);
            throw CudaError(fmt::format("{} (kernel {}, problem {}, partitions {}); the journal {} keeps what "
                                        "was measured: rerun with --resume to go on",
                                        e.what(), k->name, problem.shape.name, partitions, journal_path),
                            e.code);
          }
          cudaGetLastError();
          row.status = is_unsupported_launch(e.code) ? Status::kNotSupported : Status::kFailed;
          row.reason = e.what();
          journal->append_row(row);
          ++measured_now;
          continue;
        }
        nvtxRangePop();
        journal->append_row(row);
        ++measured_now;
        if (!o.quiet) {
          const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const double eta = measured_now ? elapsed / measured_now * (total - position) : 0;
          fmt::print("[{}/{}] {:.0f}s, ETA {:.0f}s  {} p{}: {} {:.2f} us | best for {}: {:.2f} us ({})\n",
                     position, total, elapsed, eta, k->name, partitions, status_name(row.status),
                     row.time.median_us, problem.shape.name, best_us, best_name);
        }
      }
    }
  }
  cudaStreamDestroy(stream);
  write_reports(prefix, *journal);
  if (g_stop_requested) {
    fmt::print(stderr, "\ninterrupted: {} row(s) kept in {}; rerun with --resume to continue\n",
               journal->rows().size(), journal_path);
    return kExitInterrupted;
  }
  print_best_table(journal->rows());
  fmt::print("\nreports: {0}.json, {0}.csv (journal {1}); {2} row(s)\n", prefix, journal_path,
             journal->rows().size());
  return incorrect > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "Verify and time every selected kernel over a problem suite");
  cmd->add_option("--config", o->config, "Config file whose \"suite\" to sweep (and whose hash to record)");
  cmd->add_option("--filter", o->filters, "Glob over kernel names (repeatable)");
  cmd->add_option("--problem", o->problem_specs, "Inline problem (repeatable), e.g. \"batch=8,keys=512:8192\"");
  cmd->add_option("--problems", o->problems_file, "JSON problem file");
  cmd->add_option("--partitions", o->partitions, "Override partitions: a list \"1:4:16\" or auto");
  cmd->add_option("--out", o->out_prefix, "Report path prefix (default results/<gpu>_<date>)");
  cmd->add_flag("--resume", o->resume, "Continue the journal of --out where it stopped");
  cmd->add_option("--timing", o->timing, "graph (CUDA-graph replays, default) or stream");
  cmd->add_option("--reduce", o->reduce, "Split-K combination: fused into the decode kernel (default) or separate");
  cmd->add_flag("--warm", o->warm, "Do not rotate inputs beyond the L2 (warm-cache timing)");
  cmd->add_option("--time-budget", o->time_budget_s, "Seconds of sampling per point at most");
  cmd->add_option("--target-error", o->target_error, "Stop sampling once the median's relative error is below this");
  cmd->add_option("--device", o->device, "CUDA device index");
  cmd->add_option("--seed", o->seed, "Seed of the synthetic inputs");
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  cmd->add_flag("--dry-run", o->dry_run, "Print the planned points and exit (no GPU needed)");
  cmd->callback([o] {
    o->command_line = invocation_text();
    set_command_exit(run_sweep(*o));
  });
}

}  // namespace mha
