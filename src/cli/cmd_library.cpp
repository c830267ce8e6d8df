// `mha-tune library`: what an engine calling the library gets. For each problem, DecodePlan
// chooses the kernel and split from the run-time defaults (or takes --split); the
// step runs through mha::run, is checked against the reference, then timed beside the same point
// launched as the sweep launches it (StepBuffers), in the same process, over the same rotated
// inputs, rounds interleaved. Prints library / sweep per problem, their geomean and worst.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/decode_plan.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/stats.h"
#include "gpu/cuda_stream.h"
#include "gpu/device_buffer.h"
#include "gpu/device_info.h"
#include "gpu/library_view.h"
#include "gpu/point_runner.h"
#include "gpu/step_timer.h"
#include "problems/problem.h"
#include "reports/report_json.h"
#include "sweep/kernel_selection.h"
#include "sweep/memory_budget.h"
#include "sweep/sweep_plan.h"
#include "verify/reference.h"
#include "verify/verification.h"

namespace mha {
namespace {

struct LibraryOptions {
  std::vector<std::string> filters, problem_specs;
  std::string problems_file, split, json_path;
  int device = 0, rounds = 3;
  uint64_t seed = 1;
};

struct LibraryRow {
  std::string problem, kernel, split, reason, status = "passed";
  double library_us = 0, sweep_us = 0;
};

// One problem: plan, verify through run, then time both paths in alternating rounds.
LibraryRow measure(const Problem& problem, const LibraryOptions& o, const DeviceProps& props,
                   cudaStream_t stream) {
  LibraryRow row;
  row.problem = problem.shape.name;
  DecodePlanOptions po;
  po.shape = decode_shape_of(problem);
  po.page_size = problem.shape.page_size;
  po.window = problem.shape.window;
  po.chunk = problem.shape.chunk;
  po.split = o.split;
  DecodePlan plan;
  if (DecodeStatus s = DecodePlan::make(po, &plan); !s.ok()) {
    row.status = "not_supported";
    row.reason = s.message;
    return row;
  }
  row.kernel = plan.kernel().name;
  row.split = plan.split();
  row.reason = plan.reason();
  const int copies = rotation_copies(copy_bytes(problem), props.l2_bytes);
  if (auto short_of = memory_shortfall(problem, problem_device_bytes(problem, copies, false),
                                       free_device_bytes(), o.device)) {
    row.status = "not_supported";
    row.reason = *short_of;
    return row;
  }
  ProblemData data(problem, copies);
  DeviceBuffer workspace(std::max<size_t>(16, plan.workspace_bytes()));
  if (DecodeStatus s =
          plan.set_lengths(problem.lengths.data(), problem.shape.batch, workspace.get(), stream);
      !s.ok())
    throw CudaError("library: set_lengths: " + s.message, s.cuda_error);
  StepBuffers buffers(problem, plan.kernel().traits, plan.split_code(), ReduceMode::kProgrammatic);
  // The library writes the sweep's output buffer: the reference check reads it back from there.
  std::vector<StepLaunch> library_steps;
  for (int i = 0; i < steps_per_graph(copies); ++i) {
    const DecodeArgs a =
        decode_args_of(data.params(i % copies, 1), problem, buffers.out.get(), workspace.get());
    library_steps.push_back([&plan, a](cudaStream_t s) {
      const DecodeStatus st = run(plan, a, s);
      return st.ok() ? cudaSuccess
                     : (st.cuda_error != cudaSuccess ? st.cuda_error : cudaErrorInvalidValue);
    });
  }
  buffers.poison_all(stream);
  MHA_CUDA_CHECK(library_steps.front()(stream));
  MHA_CUDA_CHECK(cudaStreamSynchronize(stream));
  const ErrorReport e = compare_outputs(
      buffers.download_output(problem.shape.out_dtype), reference_output(problem, data),
      tolerance_for(problem.shape.dtype, problem.shape.out_dtype));
  if (!e.passed) {
    row.status = "failed";
    row.reason = e.reason;
    return row;
  }
  std::vector<double> library_us, sweep_us;
  for (int r = 0; r < o.rounds; ++r) {
    library_us.push_back(
        time_launches(library_steps, TimingOptions{}, stream, row.kernel).median_us);
    sweep_us.push_back(
        time_step(plan.kernel(), data, plan.split_code(), buffers, TimingOptions{}, stream)
            .median_us);
  }
  row.library_us = median(library_us);
  row.sweep_us = median(sweep_us);
  return row;
}

int run_library(const LibraryOptions& o) {
  const auto kernels = select_kernels(o.filters);
  const std::vector<ProblemSpec> specs = collect_problem_specs(o.problem_specs, o.problems_file);
  if (specs.empty())
    throw UsageError("library: give the problems to run (--problem or --problems)");
  size_t planned = 0;
  const auto problems_of = problems_by_kernel(kernels, specs, "", &planned);
  // Each problem once (the plan chooses its kernel), in the order of the specs' kernels.
  std::vector<Problem> problems;
  std::map<std::string, bool> seen;
  for (const KernelEntry* k : kernels) {
    auto it = problems_of.find(k->name);
    if (it == problems_of.end()) continue;
    for (const Problem& p : it->second)
      if (!seen[p.shape.name]) {
        seen[p.shape.name] = true;
        problems.push_back(p);
      }
  }
  if (problems.empty())
    throw UsageError("library: no compiled kernel computes any problem given; nothing to run");
  require_device(o.device);
  const DeviceProps props = device_props(o.device);
  const CudaStream owned_stream = CudaStream::on_current_device();
  const cudaStream_t stream = owned_stream.get();
  fmt::print(
      "Library (DecodePlan + run) beside the sweep's launch of the same point on {}: median µs of "
      "{} interleaved rounds, each a graph-replay median over rotated inputs.\n\n"
      "| problem | kernel | split | sweep µs | library µs | library / sweep "
      "|\n|---|---|---|---:|---:|---:|\n",
      props.name, o.rounds);
  std::vector<LibraryRow> rows;
  double log_sum = 0, worst = 0;
  int timed = 0, failed = 0;
  for (Problem problem : problems) {
    problem.seed = o.seed;
    LibraryRow row = measure(problem, o, props, stream);
    if (row.status == "passed") {
      const double ratio = row.library_us / row.sweep_us;
      log_sum += std::log(ratio);
      worst = std::max(worst, ratio);
      ++timed;
      fmt::print("| {} | {} | {} | {:.2f} | {:.2f} | {:.3f} |\n", row.problem, row.kernel,
                 row.split, row.sweep_us, row.library_us, ratio);
    } else {
      failed += row.status == "failed";
      fmt::print("| {} | {} | {} | - | - | {}: {} |\n", row.problem, row.kernel, row.split,
                 row.status, row.reason);
    }
    rows.push_back(std::move(row));
  }
  const double geomean = timed > 0 ? std::exp(log_sum / timed) : 0;
  fmt::print(
      "\n{} problem(s) timed, {} failed verification; library / sweep geomean {:.3f}, worst "
      "{:.3f}\n",
      timed, failed, geomean, worst);
  if (!o.json_path.empty()) {
    nlohmann::json j = {
        {"gpu_name", props.name}, {"rounds", o.rounds}, {"geomean", geomean}, {"worst", worst}};
    for (const LibraryRow& r : rows)
      j["problems"].push_back({{"problem", r.problem},
                               {"kernel", r.kernel},
                               {"split", r.split},
                               {"reason", r.reason},
                               {"status", r.status},
                               {"library_us", r.library_us},
                               {"sweep_us", r.sweep_us}});
    write_text_file_atomic(o.json_path, j.dump(2) + "\n");
  }
  if (timed == 0) {
    fmt::print("library: no problem could be timed\n");
    return kExitFailure;
  }
  return failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void add_library_command(CLI::App& app) {
  auto o = std::make_shared<LibraryOptions>();
  auto* cmd = app.add_subcommand(
      "library", "Each problem through the library's plan and run, beside the sweep's launch");
  add_selection_options(cmd, o->filters, o->problem_specs, o->problems_file,
                        "batch=8,kv_heads=8,keys=8192");
  cmd->add_option("--split", o->split,
                  "The split for every plan (16, plan2x128, cluster4); default: the defaults'");
  cmd->add_option("--rounds", o->rounds, "Interleaved timing rounds per path")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--json", o->json_path, "Write the table as JSON");
  cmd->add_option("--device", o->device, "CUDA device index");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->check(CLI::NonNegativeNumber);
  cmd->callback([o] { set_command_exit(run_library(*o)); });
}

}  // namespace mha
