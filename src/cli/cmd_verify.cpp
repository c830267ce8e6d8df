// `mha-tune verify`: runs every selected kernel on a problem set against the reference, prints
// a pass/fail table with the error of each point, and exits 1 if any point fails.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/errors.h"
#include "gpu/device_info.h"
#include "gpu/point_runner.h"
#include "problems/problem.h"
#include "problems/problem_coverage.h"
#include "reports/select.h"
#include "sweep/kernel_selection.h"
#include "sweep/memory_budget.h"
#include "sweep/sweep_plan.h"
#include "verify/dump_manifest.h"
#include "verify/npy_writer.h"
#include "verify/reference.h"
#include "verify/verify_point.h"

namespace mha {
namespace {

struct VerifyOptions {
  std::vector<std::string> filters, problem_specs;
  std::string problems_file, suite, dump_dir, reduce = "programmatic";
  int device = 0;
  uint64_t seed = 1;
  bool quiet = false;
};

// Writes inputs, reference and the kernel's output of one point as .npy plus a manifest.
void dump_point(const std::string& dir, const KernelEntry& k, const Problem& p, int partitions,
                const ProblemData& data, const std::vector<double>& ref, const VerifyOutcome& r) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(dir) / p.shape.name;
  fs::create_directories(root);
  const ProblemShape& s = p.shape;
  const size_t B = s.batch, T = s.q_len, H = s.heads, Hkv = s.kv_heads, D = s.depth;
  // A ragged step's rows are its tokens, sequence after sequence (manifest: shape.q_lens).
  const bool ragged = !s.ragged_q_lens.empty();
  const size_t tokens = size_t(total_query_tokens(s));
  const std::vector<size_t> rows_shape =
      ragged ? std::vector<size_t>{tokens, H, D} : std::vector<size_t>{B, T, H, D};
  const fs::path inputs = root / "q.npy";
  if (!fs::exists(inputs)) {
    const HostInputs in = data.download();
    write_npy((root / "q.npy").string(), in.q, rows_shape);
    write_npy((root / "k.npy").string(), in.k, {B, size_t(in.max_len), Hkv, D});
    write_npy((root / "v.npy").string(), in.v, {B, size_t(in.max_len), Hkv, D});
    write_npy((root / "lengths.npy").string(), in.lengths, {B});
    if (s.has_sink) write_npy((root / "sink_weights.npy").string(), in.sink_logits, {H});
    if (!in.tree_words.empty())  // 16 tokens at most: every word fits an int
      write_npy((root / "tree_mask.npy").string(),
                std::vector<int>(in.tree_words.begin(), in.tree_words.end()),
                ragged ? std::vector<size_t>{tokens} : std::vector<size_t>{B, T});
    write_npy((root / "reference.npy").string(), std::vector<float>(ref.begin(), ref.end()),
              rows_shape);
  }
  const std::string out_name = fmt::format("out_{}_p{}.npy", k.name, split_label(partitions));
  write_npy((root / out_name).string(), r.output, rows_shape);
  const fs::path manifest_path = root / "manifest.json";
  nlohmann::json manifest = dump_manifest(p);
  if (fs::exists(manifest_path)) {  // the outputs of the problem's other points stay
    const nlohmann::json before = nlohmann::json::parse(std::ifstream(manifest_path));
    if (before.contains("outputs")) manifest["outputs"] = before["outputs"];
  }
  manifest["outputs"][out_name] = {{"kernel", k.name},
                                   {"partitions", partitions},
                                   {"status", status_name(r.status)},
                                   {"rel_l2_error", r.error.rel_l2}};
  std::ofstream(manifest_path) << manifest.dump(2) << "\n";
}

int run_verify(const VerifyOptions& o) {
  const auto kernels = select_kernels(o.filters);
  const ReduceMode reduce = reduce_mode_from_name(o.reduce);
  const std::vector<ProblemSpec> specs = collect_problem_specs(o.problem_specs, o.problems_file);
  const std::string suite = o.suite.empty() && specs.empty() ? "basic" : o.suite;
  check_problem_coverage(specs, kernels, !suite.empty());  // before the device: a usage error
  // Every problem is built before the device is touched, so that bad input exits 2 (not 3 for
  // "no CUDA device") and a problem set that gives no point is refused instead of passing.
  size_t planned = 0;
  std::map<std::string, std::vector<Problem>> problems_of =
      problems_by_kernel(kernels, specs, suite, &planned);
  if (planned == 0)
    throw UsageError(
        fmt::format("verify: no selected kernel ({}) computes any problem given; "
                    "nothing would be verified",
                    kernels.size()));
  require_device(o.device);
  // "auto" is the partition rule's pick on this GPU (it was silently dropped before).
  const int sm_count = device_props(o.device).sm_count;
  for (const KernelEntry* k : kernels)
    for (Problem& p : problems_of[k->name])
      resolve_partitions(p, default_partition_rule(), sm_count, k->traits);

  fmt::print("{:<70} {:<48} {:>4} {:>10} {:>10}  {}\n", "kernel", "problem", "P", "rel_l2",
             "max_abs", "status");
  struct Tally {
    int passed = 0, total = 0;
    double worst = 0;
  };
  std::map<std::string, Tally> per_kernel;
  int failures = 0, points = 0, passed = 0;
  for (const KernelEntry* k : kernels) {
    std::vector<Problem>& problems = problems_of[k->name];
    Tally& tally = per_kernel[k->name];
    for (Problem& problem : problems) {
      problem.seed = o.seed;
      const auto too_large =
          memory_shortfall(problem, problem_device_bytes(problem, 1, reduce == ReduceMode::kFused),
                           free_device_bytes(), o.device);
      if (too_large) {  // reported per point like any other disposition, not as a raw CUDA error
        for (int partitions : problem.partitions) {
          ++points;
          ++tally.total;
          fmt::print("{:<70} {:<48} {:>4} {:>10} {:>10}  {} ({})\n", k->name, problem.shape.name,
                     split_label(partitions), "-", "-", status_name(Status::kNotSupported),
                     *too_large);
        }
        continue;
      }
      ProblemData data(problem, 1);
      const std::vector<double> ref = reference_output(problem, data);
      for (int partitions : problem.partitions) {
        const VerifyOutcome r = verify_point(*k, problem, data, partitions, ref, reduce);
        ++points;
        ++tally.total;
        const bool ok = r.status == Status::kPassed;
        tally.passed += ok;
        passed += ok;
        tally.worst = std::max(tally.worst, r.error.rel_l2);
        if (!ok && r.status != Status::kNotSupported) ++failures;
        if (!o.quiet || !ok)
          fmt::print("{:<70} {:<48} {:>4} {:>10.3e} {:>10.3e}  {}{}\n", k->name, problem.shape.name,
                     split_label(partitions), r.error.rel_l2, r.error.max_abs,
                     status_name(r.status), ok ? "" : " (" + r.reason + ")");
        if (!o.dump_dir.empty()) dump_point(o.dump_dir, *k, problem, partitions, data, ref, r);
      }
    }
    if (tally.total == 0)
      fmt::print("{:<70} no problem of this kernel's family in the problem set\n", k->name);
  }
  fmt::print("\nSummary (suite {}, seed {}):\n{:<70} {:>9} {:>12}\n", suite.empty() ? "-" : suite,
             o.seed, "kernel", "passed", "worst_rel_l2");
  for (const auto& [name, t] : per_kernel)
    fmt::print("{:<70} {:>4}/{:<4} {:>12.3e}\n", name, t.passed, t.total, t.worst);
  // Points this GPU could not run (too large, or a split the kernel cannot take) are listed
  // above; the summary says how many, and a run that verified none of its points fails.
  const int unsupported = points - passed - failures;
  fmt::print("{} point(s), {} failed, over {} kernel(s){}\n", points, failures, kernels.size(),
             unsupported > 0
                 ? fmt::format("; {} of them not supported here (listed above)", unsupported)
                 : std::string());
  if (passed == 0 && failures == 0) {
    fmt::print("verify: no point could run on this GPU; nothing was verified\n");
    return kExitFailure;
  }
  return failures > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto o = std::make_shared<VerifyOptions>();
  auto* cmd = app.add_subcommand("verify", "Check every selected kernel against the reference");
  add_selection_options(cmd, o->filters, o->problem_specs, o->problems_file,
                        "batch=1,heads=32,kv_heads=8,keys=4097,partitions=1:8");
  cmd->add_option("--suite", o->suite, "Built-in suite: basic (default) or edge");
  cmd->add_option("--device", o->device, "CUDA device index");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->check(CLI::NonNegativeNumber);
  cmd->add_option("--dump", o->dump_dir, "Write inputs, outputs and references as .npy here");
  cmd->add_option("--reduce", o->reduce,
                  "Split-K combination: programmatic (default), separate, fused or cluster");
  cmd->add_flag("--quiet", o->quiet, "Print only failures and the summary");
  cmd->callback([o] { set_command_exit(run_verify(*o)); });
}

}  // namespace mha
