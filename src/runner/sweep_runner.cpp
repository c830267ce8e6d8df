// The sweep runner (sweep_runner.h): the plan's problems pulled by one worker per GPU, each
// with its own stream and clock monitor; every point verified, timed, journaled as it
// finishes, and inside an NVTX range of its own.
#include "runner/sweep_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "common/fnv1a.h"
#include "gpu/bandwidth_probe.h"
#include "gpu/cuda_stream.h"
#include "gpu/device_info.h"
#include "gpu/gpu_monitor.h"
#include "gpu/nvtx_range.h"
#include "gpu/point_runner.h"
#include "gpu/read_floor.h"
#include "gpu/step_timer.h"
#include "problems/config_schema.h"
#include "problems/problem.h"
#include "problems/problem_coverage.h"
#include "reports/journal.h"
#include "reports/report_csv.h"
#include "reports/report_json.h"
#include "reports/samples_file.h"
#include "reports/select.h"
#include "sweep/family_expansion.h"
#include "sweep/kernel_selection.h"
#include "sweep/memory_budget.h"
#include "sweep/point_list.h"
#include "sweep/report_prefix.h"
#include "sweep/sharding.h"
#include "sweep/sweep_plan.h"
#include "verify/reference.h"
#include "verify/verify_point.h"

namespace mha {
namespace {

// Ctrl-C (or SIGTERM) asks the sweep to stop after the point in flight: the journal and reports
// then hold every finished point and --resume continues. A second Ctrl-C kills as usual.
std::atomic<bool> g_stop_requested{false};
extern "C" void request_stop(int signal_number) {
  g_stop_requested = true;
  std::signal(signal_number, SIG_DFL);
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

std::vector<PlannedProblem> plan_work(const std::vector<ProblemSpec>& specs,
                                      const std::vector<const KernelEntry*>& kernels,
                                      const SweepOptions& o, int sm_count) {
  SweepPlanInput in;
  in.partitions_override = o.partitions;
  // `auto` uses select's fitted rule when given one, else the documented unfitted default.
  in.rule = o.rule_file.empty() ? default_partition_rule() : read_partition_rule(o.rule_file);
  in.seed = o.seed;
  in.sm_count = sm_count;
  if (!o.quiet)  // stderr: --dry-run --json keeps stdout for the plan
    for (const std::string& note : family_expansion_notes(specs, kernels))
      fmt::print(stderr, "{}\n", note);
  return plan_sweep(specs, kernels, in);
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

void write_reports(const std::string& prefix, const Journal& journal, double wall_time_s) {
  RunMetadata meta = journal.meta();
  meta.wall_time_s = wall_time_s;
  write_report_json(prefix + ".json", meta, journal.rows());
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
               r->achieved_gbps, 100 * r->peak_fraction, split_label(r->partitions), r->kernel);
}

// What every device worker of one sweep shares. The journal is not thread-safe: every access
// goes through journal_mutex.
struct SweepContext {
  SweepContext(const SweepOptions& o, ReduceMode mode) : options(o), reduce(mode) {}
  const SweepOptions& options;
  ReduceMode reduce;
  TimingOptions timing;
  std::string prefix, journal_path;
  std::optional<Journal> journal;
  std::mutex journal_mutex;                         // also guards samples_out
  std::unique_ptr<std::ofstream> samples_out;       // sweep --samples: PREFIX.samples.jsonl
  std::optional<std::set<std::string>> shard_keys;  // this shard's points; unset: all
  size_t total = 0;
  std::atomic<size_t> position{0}, measured{0};
  std::atomic<int> incorrect{0};
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

// One GPU of the sweep: its stream, clock monitor and own measured peak bandwidth.
struct DeviceWorker {
  int device = 0;
  DeviceProps props;
  double peak_gbps = 0;
  CudaStream stream;  // created with the worker, on its device
  std::unique_ptr<GpuMonitor> monitor;
};

// A sticky CUDA error: this device's context is gone; its remaining work goes elsewhere.
struct DeviceLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Verifies and times one point into `row` (status, errors, timing).
void measure_point(SweepContext& ctx, DeviceWorker& w, const KernelEntry& k, const Problem& problem,
                   int partitions, const ProblemData& data, const std::vector<double>& ref,
                   ResultRow& row) {
  const VerifyOutcome v = verify_point(k, problem, data, partitions, ref, ctx.reduce);
  row.status = v.status;
  row.reason = v.reason;
  row.rel_l2_error = v.error.rel_l2;
  row.max_abs_error = v.error.max_abs;
  row.bytes = step_bytes(problem, partitions);
  if (v.status == Status::kIncorrect) ++ctx.incorrect;
  if (v.status != Status::kPassed) return;
  StepBuffers buffers(problem, k.traits, partitions, ctx.reduce);
  row.bytes = step_bytes_with_partials(problem, buffers.partial_rows_per_head());
  row.plan_us = buffers.plan_us;
  row.time = time_step(k, data, partitions, buffers, ctx.timing, w.stream.get());
  const ClockReading clock = w.monitor->read();
  row.achieved_gbps = row.bytes / (row.time.median_us * 1e-6) / 1e9;
  row.peak_fraction = w.peak_gbps > 0 ? row.achieved_gbps / w.peak_gbps : 0;
  row.sm_clock_mhz = clock.sm_clock_mhz;
  row.throttled = clock.throttled;
}

// Every point of one problem on one device; the problem's data and reference are made once.
void run_item(SweepContext& ctx, DeviceWorker& w, const PlannedProblem& item) {
  const Problem& problem = item.problem;
  const SweepOptions& o = ctx.options;
  double best_us = 0;
  std::string best_name;
  std::unique_ptr<ProblemData> data;
  std::vector<double> ref;
  double floor_us = 0;    // the problem's read floor (read_floor.h); 0 when not measured
  std::string too_large;  // why the problem does not fit into free device memory
  for (const KernelEntry* k : item.kernels) {
    for (int partitions : problem.partitions) {
      if (g_stop_requested) return;
      ResultRow row = point_row(*k, problem, partitions, w.device);
      const std::string key = point_key(row);
      if (ctx.shard_keys && !ctx.shard_keys->count(key)) continue;
      {
        std::lock_guard<std::mutex> lock(ctx.journal_mutex);
        if (ctx.journal->done_keys().count(key)) continue;
        if (ctx.journal->crashed_keys().count(key)) {
          ctx.journal->append_row(crashed_row(row));
          continue;
        }
        ctx.journal->append_started(row);
      }
      const size_t position = ++ctx.position;
      const std::string range =
          fmt::format("{} | {} | p{}", k->name, problem.shape.name, split_label(partitions));
      {
        const NvtxRange point_range(range);
        try {
          if (!data && too_large.empty()) {
            const int copies = o.warm ? 1 : rotation_copies(copy_bytes(problem), w.props.l2_bytes);
            const MemoryNeed need =
                problem_device_bytes(problem, copies, ctx.reduce == ReduceMode::kFused);
            too_large = memory_shortfall(problem, need, free_device_bytes(), w.device).value_or("");
            if (too_large.empty()) {
              data = std::make_unique<ProblemData>(problem, copies);
              ref = reference_output(problem, *data);
              floor_us = problem_floor_us(problem, copies, ctx.timing, w.stream.get());
            }
          }
          if (!too_large.empty()) {
            row.status = Status::kNotSupported;
            row.reason = too_large;
          } else {
            measure_point(ctx, w, *k, problem, partitions, *data, ref, row);
            row.floor_us = floor_us;
          }
        } catch (const CudaError& e) {
          cudaGetLastError();
          row.status = is_unsupported_launch(e.code) ? Status::kNotSupported : Status::kFailed;
          row.reason = e.what();
          if (e.is_sticky() || e.code == cudaErrorNoDevice) {
            std::lock_guard<std::mutex> lock(ctx.journal_mutex);
            ctx.journal->append_row(row);
            throw DeviceLost(fmt::format("GPU {}: {} (kernel {}, problem {}, partitions {})",
                                         w.device, e.what(), k->name, problem.shape.name,
                                         split_label(partitions)));
          }
        }
      }
      {
        std::lock_guard<std::mutex> lock(ctx.journal_mutex);
        ctx.journal->append_row(row);
        if (ctx.samples_out && row.status == Status::kPassed && !row.time.samples_us.empty())
          *ctx.samples_out << samples_line(key, row.time.samples_us) << std::flush;
      }
      const size_t measured = ++ctx.measured;
      if (row.status == Status::kPassed && (best_us == 0 || row.time.median_us < best_us)) {
        best_us = row.time.median_us;
        best_name = fmt::format("{} p{}", k->name, split_label(partitions));
      }
      if (!o.quiet) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.start).count();
        const double eta = elapsed / measured * (ctx.total - std::min(ctx.total, position));
        fmt::print(
            "[{}/{}] {:.0f}s, ETA {:.0f}s  gpu{} {} p{}: {} {:.2f} us | best for {}: {:.2f} us "
            "({})\n",
            position, ctx.total, elapsed, eta, w.device, k->name, split_label(partitions),
            status_name(row.status), row.time.median_us, problem.shape.name, best_us, best_name);
      }
    }
  }
}

std::vector<int> parse_devices(const std::string& text, int fallback) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) require_device(0);  // throws
  std::vector<int> devices;
  if (text.empty())
    devices = {fallback};
  else if (text == "all")
    for (int d = 0; d < count; ++d) devices.push_back(d);
  else {
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
      try {
        devices.push_back(std::stoi(item));
      } catch (const std::exception&) {
        throw UsageError(fmt::format("--devices '{}': '{}' is not a device index", text, item));
      }
    }
  }
  for (int d : devices)
    if (d < 0 || d >= count)
      throw UsageError(fmt::format("--devices '{}': device {} does not exist ({} CUDA device(s))",
                                   text, d, count));
  return devices;
}

std::string host_name() {
  char buf[256] = {0};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "host";
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  const auto kernels = select_kernels(o.filters);
  if (!o.config.empty())  // the generator's rules; and the build, not --config, picks kernels
    warn_config_build_mismatch(o.config, read_config_families(o.config), kernel_registry());
  std::vector<ProblemSpec> specs = collect_problem_specs(o.problem_specs, o.problems_file);
  if (specs.empty() && !o.config.empty()) specs = read_problem_file(o.config);
  if (specs.empty())
    throw UsageError(
        "sweep: no problems: give --problem, --problems FILE or a --config with a \"suite\"");
  check_problem_coverage(specs, kernels, false);
  SweepContext ctx(o, reduce_mode_from_name(o.reduce));
  if (o.timing != "graph" && o.timing != "stream")
    throw UsageError(fmt::format("--timing: '{}' is not one of graph, stream", o.timing));
  if (!std::isfinite(o.time_budget_s) || o.time_budget_s <= 0 || !std::isfinite(o.target_error) ||
      o.target_error <= 0)
    throw UsageError(
        fmt::format("--time-budget {} / --target-error {}: both must be positive numbers",
                    o.time_budget_s, o.target_error));
  const std::optional<ShardSpec> shard =
      o.shard.empty() ? std::nullopt : std::optional(parse_shard(o.shard));

  if (o.dry_run) {  // the plan only: no GPU needed; "auto" resolved for --sm-count SMs
    constexpr int kH200SmCount = 132;  // the GPU the estimate's model was measured on
    const int sm_count = o.sm_count > 0 ? o.sm_count : kH200SmCount;
    std::vector<PlannedProblem> plan;
    plan = plan_work(specs, kernels, o, sm_count);
    std::optional<std::set<std::string>> only;
    if (!o.points_file.empty()) only = read_point_list(o.points_file);
    return print_sweep_plan(plan, {o.json, shard, o.time_budget_s, o.timing == "graph", o.warm,
                                   sm_count, only, o.points_file});
  }
  if (o.sm_count > 0)
    throw UsageError("sweep --sm-count: only for --dry-run (a sweep uses its GPU's SM count)");
  if (o.json) throw UsageError("sweep --json: prints the plan of --dry-run; give --dry-run too");
  const std::vector<int> devices = parse_devices(o.devices, o.device);
  require_device(devices.front());
  const DeviceProps props = device_props(devices.front());
  const std::string today = utc_now("%Y-%m-%d");
  ctx.prefix = !o.out_prefix.empty() ? o.out_prefix
               : o.resume            ? newest_journal_prefix("results", slug(props.name), today)
                                     : dated_report_prefix("results", slug(props.name), today);
  if (o.resume && o.out_prefix.empty() && !o.quiet)
    fmt::print("resuming the newest journal of this GPU, {}.journal.jsonl (--out names another)\n",
               ctx.prefix);
  const auto parent = std::filesystem::path(ctx.prefix).parent_path();
  std::filesystem::create_directories(parent.empty() ? "." : parent);
  ctx.journal_path = ctx.prefix + ".journal.jsonl";

  // One worker per GPU, each with the read bandwidth of its own GPU as its roofline.
  std::vector<DeviceWorker> workers(devices.size());
  std::string device_list, uuid_list, pci_list;
  for (size_t i = 0; i < devices.size(); ++i) {
    DeviceWorker& w = workers[i];
    w.device = devices[i];
    MHA_CUDA_CHECK(cudaSetDevice(w.device));
    w.props = device_props(w.device);
    if (w.props.name != props.name && !o.quiet)
      fmt::print(stderr, "warning: GPU {} is a {}, GPU {} a {}\n", w.device, w.props.name,
                 devices[0], props.name);
    if (!o.quiet)
      fmt::print("measuring the peak read bandwidth of GPU {} ({}) ...\n", w.device, w.props.name);
    w.peak_gbps = measure_peak_read_gbps();
    if (!o.quiet) fmt::print("GPU {}: peak read bandwidth {:.0f} GB/s\n", w.device, w.peak_gbps);
    w.stream = CudaStream::on_current_device();
    w.monitor = std::make_unique<GpuMonitor>(w.device);
    device_list += fmt::format("{}{}:{}", device_list.empty() ? "" : ",", host_name(), w.device);
    uuid_list += (i ? "," : "") + w.props.uuid;
    pci_list += (i ? "," : "") + w.props.pci_bus_id;
  }

  if (o.resume) {
    ctx.journal.emplace(Journal::open_resume(ctx.journal_path));
    const RunMetadata& m = ctx.journal->meta();
    if (shard && (m.shard_index != shard->index || m.shard_count != shard->count))
      throw UsageError(fmt::format("--resume --shard {}: {} holds shard {}/{}", o.shard,
                                   ctx.journal_path, m.shard_index, m.shard_count));
    if (!o.quiet)
      fmt::print(
          "resuming {}: {} point(s) already measured, {} in flight when it stopped (run again)\n",
          ctx.journal_path, ctx.journal->rows().size(), ctx.journal->retry_keys().size());
  } else {
    RunMetadata meta;
    meta.tool_version = o.tool_version;
    meta.git_commit = o.git_commit;
    describe_device(devices.front(), meta);
    meta.timestamp = utc_now("%Y-%m-%dT%H:%M:%SZ");
    meta.config_file = o.config;
    meta.config_hash = o.config.empty() ? "" : fnv1a_hex(config_hash_bytes(o.config));
    meta.command_line = o.command_line;
    meta.seed = o.seed;
    meta.timing_mode = o.timing;
    meta.reduce_mode = o.reduce;
    meta.cold_cache = !o.warm;
    meta.peak_read_gbps = workers.front().peak_gbps;
    meta.devices = device_list;
    meta.gpu_uuids = uuid_list;
    meta.gpu_pci_bus_ids = pci_list;
    if (shard) {
      meta.shard_index = shard->index;
      meta.shard_count = shard->count;
    }
    ctx.journal.emplace(Journal::open_new(ctx.journal_path, meta, o.force));
  }

  if (o.samples) {
    // Beside the journal, and like it: a resume appends, a new sweep starts it again.
    const std::string path = samples_path_for(ctx.prefix + ".json");
    if (o.resume && cut_partial_last_line(path))
      fmt::print(stderr, "sweep --resume: {}: cut its unfinished last line\n", path);
    ctx.samples_out = std::make_unique<std::ofstream>(
        path, o.resume ? std::ios::app : std::ios::out | std::ios::trunc);
    if (!*ctx.samples_out) throw UsageError("sweep --samples: cannot write " + path);
  }
  const auto work = plan_work(specs, kernels, o, props.sm_count);
  std::vector<SweepPoint> points;
  std::vector<SweepPoint> item_costs;  // one per problem: the sum of its points, to balance GPUs
  for (const auto& item : work) {
    SweepPoint item_cost{item.problem.shape.name, 0};
    for (const KernelEntry* k : item.kernels)
      for (int partitions : item.problem.partitions) {
        const double cost = point_cost(item.problem.shape, partitions);
        points.push_back({point_key(k->name, item.problem.shape.name, partitions), cost});
        item_cost.cost_estimate += cost;
      }
    item_costs.push_back(item_cost);
  }
  if (shard) ctx.shard_keys = shard_keys(points, *shard);
  if (!o.points_file.empty())
    ctx.shard_keys =
        restrict_to_points(points, read_point_list(o.points_file), ctx.shard_keys, o.points_file);
  ctx.total = ctx.shard_keys ? ctx.shard_keys->size() : points.size();
  if (ctx.total == 0)
    throw UsageError("sweep: no selected kernel computes any problem of the suite");
  ctx.timing.use_graph = o.timing == "graph";
  ctx.timing.stop.time_budget_s = o.time_budget_s;
  ctx.timing.stop.target_relative_error = o.target_error;

  // Workers pull whole problems (their data and reference are shared by the problem's points),
  // largest first; a GPU that fails hands its problem back and the others finish it.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  WorkQueue queue(item_costs);
  std::mutex error_mutex;
  std::vector<std::string> lost;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers.size(); ++i) {
    threads.emplace_back([&, i] {
      DeviceWorker& w = workers[i];
      cudaSetDevice(w.device);
      while (const auto next = queue.next(static_cast<int>(i))) {
        try {
          run_item(ctx, w, work[*next]);
        } catch (const std::exception& e) {
          queue.requeue(*next);
          queue.retire(static_cast<int>(i));
          std::lock_guard<std::mutex> lock(error_mutex);
          lost.push_back(e.what());
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& w : workers) {  // each stream destroyed on its own device
    cudaSetDevice(w.device);
    w.stream = CudaStream();
  }
  write_reports(
      ctx.prefix, *ctx.journal,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.start).count());
  for (const auto& message : lost) fmt::print(stderr, "lost {}\n", message);
  if (!lost.empty() && queue.pending() > 0)
    throw CudaError(
        fmt::format(
            "every GPU failed ({}); the journal {} keeps what was measured: rerun with --resume",
            lost.back(), ctx.journal_path),
        cudaErrorLaunchFailure);
  if (g_stop_requested) {
    fmt::print(stderr, "\ninterrupted: {} row(s) kept in {}; rerun with --resume to continue\n",
               ctx.journal->rows().size(), ctx.journal_path);
    return kExitInterrupted;
  }
  print_best_table(ctx.journal->rows());
  fmt::print("\nreports: {0}.json, {0}.csv (journal {1}); {2} row(s)\n", ctx.prefix,
             ctx.journal_path, ctx.journal->rows().size());
  if (!lost.empty()) return kExitEnvironment;
  return ctx.incorrect > 0 ? kExitFailure : kExitOk;
}

}  // namespace mha
