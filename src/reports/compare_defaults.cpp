// The defaults' choice per problem, found in each report and judged.
#include "reports/compare_defaults.h"

#include <algorithm>
#include <map>
#include <optional>

#include "api/time_model_choice.h"
#include "reports/journal.h"
#include "reports/select.h"

namespace mha {

namespace {

DefaultsQuery query_of(const ResultRow& row) {
  const ProblemShape& s = row.problem;
  DefaultsQuery q;
  q.family =
      family_name(dtype_key(s.dtype, s.kv_dtype, s.soft_cap > 0.f, multi_token_step(s)), s.depth,
                  s.kv_heads > 0 ? s.heads / s.kv_heads : s.heads, s.kv, s.mask, s.has_sink);
  q.batch_kv_heads = std::max(1, s.batch * s.kv_heads);
  const int longest = s.ragged_lengths.empty()
                          ? s.keys
                          : *std::max_element(s.ragged_lengths.begin(), s.ragged_lengths.end());
  q.keys = std::max(1, longest);
  q.ragged = !s.ragged_lengths.empty();
  return q;
}

// The passed row of `problem` at the choice's split and kernel, or at the same tile of another
// instance (the table keys families without the output dtype): null when none passed.
const ResultRow* chosen_row(const Report& r, const std::string& problem,
                            const DefaultsAlternative& choice) {
  const ResultRow* same_tile = nullptr;
  const std::string tile = tile_of_kernel_name(choice.kernel);
  for (const ResultRow& row : r.rows) {
    if (row.problem.name != problem || row.partitions != choice.partitions ||
        row.status != Status::kPassed || !(row.time.median_us > 0))
      continue;
    if (row.kernel == choice.kernel) return &row;
    if (tile_of_kernel_name(row.kernel) == tile) same_tile = &row;
  }
  return same_tile;
}

// What the library runs for the shape on the baseline's build (its tiles: those the baseline
// measured): the table's model's choice unless the entry is the shape's own measured bucket,
// else the entry's tile, else the first of its alternatives the build has. None: the table
// answers nothing for the shape (no entry of its family, and no model choice).
std::optional<DefaultsAlternative> library_choice(const Report& baseline,
                                                  const DefaultsTable& table,
                                                  const ResultRow& first, const DefaultsEntry* e) {
  const std::string& problem = first.problem.name;
  auto measured = [&](const std::string& tile) {
    for (const ResultRow& row : baseline.rows)
      if (row.problem.name == problem && tile_of_kernel_name(row.kernel) == tile) return true;
    return false;
  };
  DefaultsQuery query = query_of(first);
  query.ragged = is_ragged_batch(first.problem);  // as select prices it: lengths that differ
  const ModelChoice m = table_model_choice(
      table, e, query, first.problem, [&](const TileModel& t, int) { return measured(t.tile); });
  if (m.tile) return DefaultsAlternative{m.tile->kernel, m.partitions};
  if (e == nullptr) return std::nullopt;
  const std::vector<DefaultsAlternative> choices = choices_of(*e);
  for (const DefaultsAlternative& choice : choices)
    if (measured(tile_of_kernel_name(choice.kernel))) return choice;
  return choices.front();
}

}  // namespace

std::vector<BestPair> judge_defaults(const Report& baseline, const Report& candidate,
                                     const DefaultsTable& table, const CompareOptions& options) {
  std::map<std::string, const ResultRow*> first_row;  // one per problem, for its shape
  for (const ResultRow& row : baseline.rows) first_row.emplace(row.problem.name, &row);
  std::vector<BestPair> out;
  for (const auto& [problem, row] : first_row) {
    const std::optional<DefaultsAlternative> chosen =
        library_choice(baseline, table, *row, lookup_defaults(table, query_of(*row)));
    if (!chosen) continue;
    const DefaultsAlternative& choice = *chosen;
    BestPair p;
    p.problem = problem;
    const ResultRow* b = chosen_row(baseline, problem, choice);
    const ResultRow* c = chosen_row(candidate, problem, choice);
    p.baseline_point = b ? point_key(*b) : point_key(choice.kernel, problem, choice.partitions);
    if (b == nullptr) {
      p.verdict = Verdict::kNotComparable;
    } else if (c == nullptr) {
      p.baseline_us = b->time.median_us;
      p.verdict = Verdict::kBroken;
    } else {
      p.candidate_point = point_key(*c);
      p.baseline_us = b->time.median_us;
      p.candidate_us = c->time.median_us;
      p.tolerance = std::max(options.threshold, options.noise_k * pair_noise(b->time, c->time));
      const double ratio = p.candidate_us / p.baseline_us;
      p.verdict = ratio > 1.0 + p.tolerance           ? Verdict::kSlower
                  : ratio < 1.0 / (1.0 + p.tolerance) ? Verdict::kFaster
                                                      : Verdict::kSame;
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace mha
