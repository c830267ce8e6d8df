// The dry-run plan and its duration estimate (model in sweep_plan.h).
#include "sweep/sweep_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "api/split_plan.h"
#include "common/errors.h"
#include "common/result_row.h"
#include "sweep/memory_budget.h"
#include "sweep/point_list.h"

namespace mha {

void resolve_partitions(Problem& p, const PartitionRule& rule, int sm_count,
                        const KernelTraits& kernel) {
  if (p.partitions_auto) {
    const int units =
        rule_work_units(p.shape.batch * p.shape.kv_heads, p.group() * p.shape.q_len, kernel.bm);
    p.partitions.push_back(auto_partitions(rule, sm_count, units, p.shape.keys));
  }
  // One order everywhere: split plans (negative) first, then counts ascending.
  std::sort(p.partitions.begin(), p.partitions.end());
  p.partitions.erase(std::unique(p.partitions.begin(), p.partitions.end()), p.partitions.end());
}

// Two specs may give one kernel the same problem (one that leaves kv to the kernel's family and
// one that names it, say): it runs once, with the splits of both.
namespace {
bool same_problem(const Problem& a, const Problem& b) {
  return a.shape.name == b.shape.name && problem_name(a) == problem_name(b) &&
         a.lengths == b.lengths;
}
void merge_splits(Problem& into, const Problem& from) {
  into.partitions.insert(into.partitions.end(), from.partitions.begin(), from.partitions.end());
  std::sort(into.partitions.begin(), into.partitions.end());
  into.partitions.erase(std::unique(into.partitions.begin(), into.partitions.end()),
                        into.partitions.end());
  into.partitions_auto = into.partitions_auto || from.partitions_auto;
}
}  // namespace

std::vector<PlannedProblem> plan_sweep(const std::vector<ProblemSpec>& specs,
                                       const std::vector<const KernelEntry*>& kernels,
                                       const SweepPlanInput& in) {
  std::optional<ProblemSpec> override_spec;
  if (!in.partitions_override.empty()) {
    override_spec = parse_problem_spec("partitions=" + in.partitions_override);
    override_spec->origin = "--partitions";
  }
  std::vector<PlannedProblem> work;
  std::map<std::string, size_t> index;
  for (const auto& spec : specs)
    for (const KernelEntry* k : kernels) {
      std::string why;
      for (Problem p : instantiate(spec, k->traits, &why)) {
        p.seed = in.seed;
        if (override_spec) {
          p.partitions = spec_partitions(*override_spec);
          p.partitions_auto = override_spec->partitions_auto;
        }
        resolve_partitions(p, in.rule, in.sm_count, k->traits);
        auto [it, inserted] = index.emplace(p.shape.name, work.size());
        if (inserted) work.push_back({p, {}});
        // A name is a problem's identity in reports: one name for two problems (a named spec
        // that leaves kv or page_size to the families) would give one kernel the other's data.
        PlannedProblem& planned = work[it->second];
        if (!inserted && problem_name(planned.problem) != problem_name(p))
          throw UsageError(fmt::format(
              "{}: the name '{}' stands for two problems, {} and {} (for kernel {}): give the "
              "differing keys in the spec, or a name per problem",
              spec.origin, p.shape.name, problem_name(planned.problem), problem_name(p), k->name));
        // Another kernel of the problem shares its splits (resolved for the first kernel, as
        // before); a second spec of it for the same kernel adds its own.
        const bool listed =
            std::find(planned.kernels.begin(), planned.kernels.end(), k) != planned.kernels.end();
        if (listed)
          merge_splits(planned.problem, p);
        else
          planned.kernels.push_back(k);
      }
    }
  return work;
}

double estimate_point_s(const Problem& p, int partitions, const PlanOptions& o,
                        const EstimateModel& m) {
  const double bytes = step_bytes(p, partitions);
  const double step_us = std::max(m.step_floor_us, bytes / (m.read_gbps * 1e9) * 1e6);
  // Graph timing replays every rotated input copy once per sample (step_timer.cu).
  const int copies = o.warm ? 1 : rotation_copies(bytes, m.l2_bytes);
  const int steps_per_sample = o.use_graph ? std::max(copies, 8) : 1;
  const double sampling_s =
      std::min(o.time_budget_s, m.samples * steps_per_sample * step_us * 1e-6);
  return m.per_point_overhead_s + m.warmup_s + sampling_s;
}

int print_sweep_plan(const std::vector<PlannedProblem>& plan, const PlanOptions& o) {
  const EstimateModel model;
  // The same points and the same assignment as the real run (sweep's shard_keys).
  std::vector<SweepPoint> points;
  for (const auto& item : plan)
    for (const KernelEntry* k : item.kernels)
      for (int parts : item.problem.partitions)
        points.push_back({point_key(k->name, item.problem.shape.name, parts),
                          point_cost(item.problem.shape, parts)});
  std::optional<std::set<std::string>> mine;
  if (o.shard) mine = shard_keys(points, *o.shard);
  if (o.points) mine = restrict_to_points(points, *o.points, mine, o.points_file);

  nlohmann::json problems = nlohmann::json::array();
  std::set<std::string> kernel_names;
  std::set<int> partition_counts;
  size_t total_points = 0;
  double total_s = 0;
  if (!o.json)
    fmt::print("{:<44} {:>7} {:>6} {:>10}  {}\n", "problem", "kernels", "points", "est_s",
               "partitions");
  for (const auto& item : plan) {
    const Problem& p = item.problem;
    nlohmann::json kernels = nlohmann::json::array();
    size_t n = 0;
    double seconds = 0;
    std::set<const KernelEntry*> used;
    std::set<int> used_parts;
    for (const KernelEntry* k : item.kernels)
      for (int parts : p.partitions) {
        if (mine && !mine->count(point_key(k->name, p.shape.name, parts))) continue;
        ++n;
        seconds += estimate_point_s(p, parts, o, model);
        used.insert(k);
        used_parts.insert(parts);
      }
    if (n == 0) continue;  // all of this problem's points belong to other shards
    seconds += model.per_problem_setup_s;
    for (const KernelEntry* k : item.kernels)
      if (used.count(k)) {
        kernels.push_back(k->name);
        kernel_names.insert(k->name);
      }
    partition_counts.insert(used_parts.begin(), used_parts.end());
    total_points += n;
    total_s += seconds;
    const ProblemShape& s = p.shape;
    problems.push_back({{"name", s.name},
                        {"batch", s.batch},
                        {"heads", s.heads},
                        {"kv_heads", s.kv_heads},
                        {"depth", s.depth},
                        {"q_len", s.q_len},
                        {"ragged_q_lens", s.ragged_q_lens},
                        {"dtype", s.dtype},
                        {"out_dtype", s.out_dtype},
                        {"kv_dtype", s.kv_dtype},
                        {"kv_scale", s.kv_scale},
                        {"soft_cap", s.soft_cap},
                        {"kv", s.kv},
                        {"page_size", s.page_size},
                        {"mask", s.mask},
                        {"tree_depth", s.tree_depth},
                        {"window", s.window},
                        {"chunk", s.chunk},
                        {"has_sink", s.has_sink},
                        {"sink_mean", p.sink_mean},
                        {"q_std", p.q_std},
                        {"scale", p.effective_scale()},
                        {"keys", s.keys},
                        {"lengths", s.lengths},
                        {"ragged_lengths", s.ragged_lengths},
                        {"partitions", std::vector<int>(used_parts.begin(), used_parts.end())},
                        {"kernels", kernels},
                        {"points", n},
                        {"bytes_per_step", step_bytes(p, 1)},
                        {"estimated_s", seconds}});
    if (!o.json) {
      std::string parts;
      for (int x : used_parts)
        parts += fmt::format("{}{}", parts.empty() ? "" : ",", split_label(x));
      fmt::print("{:<44} {:>7} {:>6} {:>10.1f}  {}\n", s.name, used.size(), n, seconds, parts);
    }
  }
  if (total_points == 0)
    throw UsageError(
        o.shard ? fmt::format("sweep --dry-run --shard {}/{}: this shard has no point "
                              "(the sweep has {} in all)",
                              o.shard->index, o.shard->count, points.size())
                : std::string("sweep: no selected kernel computes any problem of the suite"));
  const std::string method = fmt::format(
      "per point: {:.2f} s overhead + {:.2f} s warm-up + min(--time-budget {:g} s, {} samples x "
      "steps per sample x step time), step time = max({:g} us, bytes / {:g} GB/s); per problem: "
      "{:.2f} s for inputs and reference. Bandwidth, step floor and sample count are the H200's "
      "(results/h200_default.json); another GPU scales the sampling part",
      model.per_point_overhead_s, model.warmup_s, o.time_budget_s, model.samples,
      model.step_floor_us, model.read_gbps, model.per_problem_setup_s);
  if (o.json) {
    nlohmann::json out{
        {"dry_run", true},
        {"shard", o.shard ? nlohmann::json{{"index", o.shard->index}, {"count", o.shard->count}}
                          : nlohmann::json(nullptr)},
        {"counts",
         {{"problems", problems.size()},
          {"kernels", kernel_names.size()},
          {"partition_counts", partition_counts.size()},
          {"points", total_points}}},
        {"kernels", kernel_names},
        {"problems", problems},
        {"estimate",
         {{"seconds", total_s},
          {"method", method},
          {"assumed_read_gbps", model.read_gbps},
          {"step_floor_us", model.step_floor_us},
          {"samples_per_point", model.samples},
          {"time_budget_s", o.time_budget_s},
          {"auto_partitions_sm_count", o.sm_count}}}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{} problem(s) x {} kernel(s) x {} partition count(s): {} point(s){}\n",
               problems.size(), kernel_names.size(), partition_counts.size(), total_points,
               o.shard ? fmt::format(" in shard {}/{}", o.shard->index, o.shard->count) : "");
    fmt::print("estimated duration: {:.1f} s ({:.1f} min); {}\n", total_s, total_s / 60, method);
  }
  return kExitOk;
}

std::map<std::string, std::vector<Problem>> problems_by_kernel(
    const std::vector<const KernelEntry*>& kernels, const std::vector<ProblemSpec>& specs,
    const std::string& suite, size_t* points) {
  std::map<std::string, std::vector<Problem>> problems_of;
  *points = 0;
  for (const KernelEntry* k : kernels) {
    std::vector<Problem>& problems = problems_of[k->name];
    if (!suite.empty()) problems = builtin_suite(suite, k->traits);
    for (const auto& spec : specs) {
      std::string why;  // a spec outside this kernel's family gives no problem
      for (auto& p : instantiate(spec, k->traits, &why)) {
        auto same = std::find_if(problems.begin(), problems.end(),
                                 [&](const Problem& q) { return same_problem(q, p); });
        if (same != problems.end())
          merge_splits(*same, p);
        else
          problems.push_back(p);
      }
    }
    for (const Problem& p : problems) *points += p.partitions.size() + (p.partitions_auto ? 1 : 0);
  }
  return problems_of;
}

}  // namespace mha
