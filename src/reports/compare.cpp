// Pairing, classification and the markdown / CSV output of `mha-tune compare`.
#include "reports/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "api/split_plan.h"
#include "common/errors.h"
#include "common/stats.h"
#include "reports/compare_defaults.h"
#include "reports/journal.h"
#include "reports/noise_floor.h"
#include "reports/rank_test.h"
#include "reports/report_csv.h"

namespace mha {

namespace {

constexpr size_t kMaxListed = 50;  // one-sided rows listed in the markdown

double relative_se(const TimingStats& t) {
  if (!(t.median_us > 0) || t.samples < 1 || !std::isfinite(t.stdev_us)) return 0;
  return kMedianSeFactor * t.stdev_us / (t.median_us * std::sqrt(static_cast<double>(t.samples)));
}

bool has_time(const ResultRow& r) {
  return r.time.median_us > 0 && std::isfinite(r.time.median_us);
}

std::string pct(double x) { return fmt::format("{:+.1f}%", 100.0 * x); }

std::string describe_meta(const RunMetadata& m, const std::string& file) {
  return fmt::format("`{}`: {} ({} SMs), commit {}, {}", file.empty() ? "-" : file,
                     m.gpu_name.empty() ? "unknown GPU" : m.gpu_name, m.sm_count,
                     m.git_commit.empty() ? "unknown" : m.git_commit, m.timestamp);
}

// Markdown cells must not break the table.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string pair_status(const ComparePair& p) {
  if (p.baseline.status == p.candidate.status) return status_name(p.candidate.status);
  std::string s =
      fmt::format("{} -> {}", status_name(p.baseline.status), status_name(p.candidate.status));
  if (!p.candidate.reason.empty() && p.candidate.status != Status::kPassed) {
    s += ": " + p.candidate.reason;
  }
  return s;
}

std::string time_cell(const ResultRow& r) {
  return has_time(r) ? fmt::format("{:.2f}", r.time.median_us) : "-";
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kSame:
      return "same";
    case Verdict::kBroken:
      return "broken";
    case Verdict::kFixed:
      return "fixed";
    case Verdict::kNotComparable:
      return "not_comparable";
    case Verdict::kAmbiguous:
      return "ambiguous";
  }
  return "unknown";
}

int CompareResult::count(Verdict v) const {
  return static_cast<int>(std::count_if(pairs.begin(), pairs.end(),
                                        [v](const ComparePair& p) { return p.verdict == v; }));
}

std::vector<MethodMismatch> method_mismatches(const RunMetadata& b, const RunMetadata& c) {
  std::vector<MethodMismatch> out;
  auto check = [&](const char* field, const std::string& x, const std::string& y) {
    if (x != y) out.push_back({field, x, y});
  };
  auto yes_no = [](bool v) { return std::string(v ? "true" : "false"); };
  check("timing_mode", b.timing_mode, c.timing_mode);
  check("cold_cache", yes_no(b.cold_cache), yes_no(c.cold_cache));
  check("reduce_mode", b.reduce_mode, c.reduce_mode);
  return out;
}

double pair_noise(const TimingStats& a, const TimingStats& b) {
  const double ea = relative_se(a), eb = relative_se(b);
  return std::sqrt(ea * ea + eb * eb);
}

namespace {

// Each problem's least-median passed row.
std::map<std::string, const ResultRow*> best_rows(const Report& r) {
  std::map<std::string, const ResultRow*> best;
  for (const ResultRow& row : r.rows) {
    if (row.status != Status::kPassed || !has_time(row)) continue;
    auto [it, is_new] = best.emplace(row.problem.name, &row);
    if (!is_new && row.time.median_us < it->second->time.median_us) it->second = &row;
  }
  return best;
}

// The problems' best points judged like pairs, and the geomeans of both kinds of ratio.
void judge_best(const Report& baseline, const Report& candidate, const CompareOptions& options,
                CompareResult* result) {
  const auto base = best_rows(baseline), cand = best_rows(candidate);
  double log_sum = 0, best_log_sum = 0;
  int timed = 0, best_timed = 0;
  for (const ComparePair& p : result->pairs) {
    if (p.verdict == Verdict::kSame || p.verdict == Verdict::kSlower ||
        p.verdict == Verdict::kFaster) {
      log_sum += std::log(p.candidate.time.median_us / p.baseline.time.median_us);
      ++timed;
    }
  }
  for (const auto& [problem, b] : base) {
    BestPair bp;
    bp.problem = problem;
    bp.baseline_point = point_key(*b);
    bp.baseline_us = b->time.median_us;
    const auto c = cand.find(problem);
    if (c == cand.end()) {
      bp.verdict = Verdict::kBroken;
    } else {
      bp.candidate_point = point_key(*c->second);
      bp.candidate_us = c->second->time.median_us;
      bp.tolerance =
          std::max(options.threshold, options.noise_k * pair_noise(b->time, c->second->time));
      const double ratio = bp.candidate_us / bp.baseline_us;
      bp.verdict = ratio > 1.0 + bp.tolerance           ? Verdict::kSlower
                   : ratio < 1.0 / (1.0 + bp.tolerance) ? Verdict::kFaster
                                                        : Verdict::kSame;
      best_log_sum += std::log(ratio);
      ++best_timed;
    }
    result->best.push_back(bp);
  }
  result->geomean_ratio = timed ? std::exp(log_sum / timed) : 0;
  result->best_geomean_ratio = best_timed ? std::exp(best_log_sum / best_timed) : 0;
}

// The rank test of a pair whose both sides kept their samples: a move the samples do not show
// as a shift (p >= alpha) is ambiguous, whichever way it went.
void test_for_shift(const CompareOptions& options, const std::string& key, ComparePair* p) {
  if (!options.baseline_samples || !options.candidate_samples) return;
  const auto a = options.baseline_samples->find(key), b = options.candidate_samples->find(key);
  if (a == options.baseline_samples->end() || b == options.candidate_samples->end()) return;
  p->p_value = mann_whitney_p(a->second, b->second);
  if ((p->verdict == Verdict::kSlower || p->verdict == Verdict::kFaster) &&
      !(p->p_value < options.alpha))
    p->verdict = Verdict::kAmbiguous;
}

}  // namespace

CompareResult compare_reports(const Report& baseline, const Report& candidate,
                              const CompareOptions& options, const std::string& baseline_file,
                              const std::string& candidate_file) {
  if (baseline.meta.gpu_name != candidate.meta.gpu_name && !options.allow_different_gpu) {
    throw UsageError(fmt::format(
        "{}: metadata.gpu_name: '{}' differs from '{}' in {}; timings from different GPUs are "
        "not comparable (pass --allow-different-gpu to compare anyway)",
        candidate_file.empty() ? "candidate" : candidate_file, candidate.meta.gpu_name,
        baseline.meta.gpu_name, baseline_file.empty() ? "baseline" : baseline_file));
  }
  const std::vector<MethodMismatch> mismatches = method_mismatches(baseline.meta, candidate.meta);
  if (!mismatches.empty() && !options.allow_method_mismatch) {
    std::string list;
    for (const MethodMismatch& m : mismatches)
      list += fmt::format("{}metadata.{}: '{}' differs from '{}'", list.empty() ? "" : "; ",
                          m.field, m.candidate, m.baseline);
    throw UsageError(
        fmt::format("{}: {} in {}; reports measured differently are not comparable (pass "
                    "--allow-method-mismatch to compare anyway)",
                    candidate_file.empty() ? "candidate" : candidate_file, list,
                    baseline_file.empty() ? "baseline" : baseline_file));
  }
  if (options.noise_floor)
    check_noise_floor_applies(*options.noise_floor, baseline.meta, baseline_file);
  CompareResult result;
  result.mismatches = mismatches;
  result.baseline_meta = baseline.meta;
  result.candidate_meta = candidate.meta;
  result.baseline_file = baseline_file;
  result.candidate_file = candidate_file;
  result.options = options;

  // One row per point on each side: with two, which one the gate compared would be an accident.
  auto refuse_duplicates = [](const Report& r, const std::string& file) {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const auto [it, is_new] = first.emplace(point_key(r.rows[i]), i);
      if (!is_new)
        throw UsageError(fmt::format("{}: rows[{}] and rows[{}] are both point '{}'",
                                     file.empty() ? "report" : file, it->second, i, it->first));
    }
  };
  refuse_duplicates(baseline, baseline_file);
  refuse_duplicates(candidate, candidate_file);
  std::map<std::string, size_t> candidate_index;
  for (size_t i = 0; i < candidate.rows.size(); ++i)
    candidate_index[point_key(candidate.rows[i])] = i;
  std::map<std::string, bool> matched;
  for (const ResultRow& base : baseline.rows) {
    const std::string key = point_key(base);
    auto it = candidate_index.find(key);
    if (it == candidate_index.end()) {
      result.only_baseline.push_back(base);
      continue;
    }
    matched[key] = true;
    ComparePair p;
    p.key = key;
    p.baseline = base;
    p.candidate = candidate.rows[it->second];
    const bool base_ok = base.status == Status::kPassed;
    const bool cand_ok = p.candidate.status == Status::kPassed;
    // A passed row carries a time: one without a finite positive median is no measurement, and a
    // gate that compared nothing for it must not pass.
    auto require_time = [&](bool passed, const ResultRow& row, const std::string& file) {
      if (passed && !has_time(row))
        throw UsageError(fmt::format(
            "{}: point '{}' passed with median_us {}: not a time; the report is unusable",
            file.empty() ? "report" : file, key, row.time.median_us));
    };
    require_time(base_ok, base, baseline_file);
    require_time(cand_ok, p.candidate, candidate_file);
    if (base_ok && !cand_ok) {
      p.verdict = Verdict::kBroken;
    } else if (!base_ok && cand_ok) {
      p.verdict = Verdict::kFixed;
    } else if (!base_ok || !has_time(base) || !has_time(p.candidate)) {
      p.verdict = Verdict::kNotComparable;
    } else {
      p.change = p.candidate.time.median_us / base.time.median_us - 1.0;
      p.tolerance =
          std::max(options.threshold, options.noise_k * pair_noise(base.time, p.candidate.time));
      if (options.noise_floor)
        p.tolerance = std::max(p.tolerance, options.noise_floor->tolerance_for(pair_time_us(
                                                base.time.median_us, p.candidate.time.median_us)));
      const double ratio = p.candidate.time.median_us / base.time.median_us;
      if (ratio > 1.0 + p.tolerance) {
        p.verdict = Verdict::kSlower;
      } else if (ratio < 1.0 / (1.0 + p.tolerance)) {
        p.verdict = Verdict::kFaster;
      } else {
        p.verdict = Verdict::kSame;
      }
      test_for_shift(options, key, &p);
    }
    result.pairs.push_back(std::move(p));
  }
  for (const ResultRow& cand : candidate.rows) {
    const std::string key = point_key(cand);
    if (!matched.count(key)) {
      matched[key] = true;
      result.only_candidate.push_back(cand);
    }
  }
  judge_best(baseline, candidate, options, &result);
  if (options.defaults) {
    if (options.defaults->sm_count != baseline.meta.sm_count)
      throw UsageError(fmt::format(
          "--defaults: the table ({}) was chosen on a GPU of {} SMs, the reports ran on {}",
          options.defaults->origin, options.defaults->sm_count, baseline.meta.sm_count));
    result.defaults = judge_defaults(baseline, candidate, *options.defaults, options);
  }
  if (options.gate == CompareOptions::Gate::kDefault && !options.defaults)
    throw UsageError("--gate default: give the defaults table with --defaults FILE");
  return result;
}

int CompareResult::defaults_count(Verdict v) const {
  return static_cast<int>(std::count_if(defaults.begin(), defaults.end(),
                                        [v](const BestPair& b) { return b.verdict == v; }));
}

int CompareResult::best_count(Verdict v) const {
  return static_cast<int>(
      std::count_if(best.begin(), best.end(), [v](const BestPair& b) { return b.verdict == v; }));
}

std::string compare_markdown(const CompareResult& r) {
  std::string md = "## mha-tune compare\n\n";
  md += "- Baseline: " + describe_meta(r.baseline_meta, r.baseline_file) + "\n";
  md += "- Candidate: " + describe_meta(r.candidate_meta, r.candidate_file) + "\n";
  if (r.baseline_meta.gpu_name != r.candidate_meta.gpu_name) {
    md += "- **Different GPUs** (--allow-different-gpu): time changes mix GPU and code.\n";
  }
  for (const MethodMismatch& m : r.mismatches) {
    md += fmt::format(
        "- **Measured differently** (--allow-method-mismatch): {} is `{}` in the baseline, `{}` "
        "in the candidate; time changes mix method and code.\n",
        m.field, m.baseline, m.candidate);
  }
  md += fmt::format(
      "- A pair is slower or faster when its median moves by more than {:.1f}% or {:g} standard "
      "errors of the two medians, whichever is larger.\n\n",
      100.0 * r.options.threshold, r.options.noise_k);
  if (r.options.noise_floor) md += noise_floor_markdown(*r.options.noise_floor) + "\n";

  const int regressions = r.regressions();
  const size_t baseline_points = r.pairs.size() + r.only_baseline.size();
  md += fmt::format("**{}** ({} regression{}", r.is_failure() ? "FAIL" : "PASS", regressions,
                    regressions == 1 ? "" : "s");
  if (r.missing_failures() > 0)
    md += fmt::format(", {} baseline point{} missing from the candidate", r.missing_failures(),
                      r.missing_failures() == 1 ? "" : "s");
  if (r.pairs.empty()) md += ", no pair matched: nothing was compared";
  md += ")\n\n";
  md += fmt::format(
      "{} of {} baseline point{} matched in the candidate; {} only in the baseline{}, {} only in "
      "the candidate.\n\n",
      r.pairs.size(), baseline_points, baseline_points == 1 ? "" : "s", r.only_baseline.size(),
      r.only_baseline.empty()   ? ""
      : r.options.allow_missing ? " (allowed: --allow-missing)"
                                : " (each a regression; --allow-missing allows them)",
      r.only_candidate.size());
  md += "| result | pairs |\n|---|---:|\n";
  md += fmt::format("| slower (regression) | {} |\n", r.count(Verdict::kSlower));
  md += fmt::format("| broken: passed -> not passed (regression) | {} |\n",
                    r.count(Verdict::kBroken));
  md += fmt::format("| faster | {} |\n", r.count(Verdict::kFaster));
  md += fmt::format("| fixed: not passed -> passed | {} |\n", r.count(Verdict::kFixed));
  md += fmt::format("| same | {} |\n", r.count(Verdict::kSame));
  md += fmt::format("| not comparable (neither passed) | {} |\n", r.count(Verdict::kNotComparable));
  if (r.options.baseline_samples && r.options.candidate_samples)
    md +=
        fmt::format("| ambiguous: past the tolerance, no shift in the samples (p >= {:g}) | {} |\n",
                    r.options.alpha, r.count(Verdict::kAmbiguous));
  md += fmt::format("| only in baseline{} | {} |\n", r.options.allow_missing ? "" : " (regression)",
                    r.only_baseline.size());
  md += fmt::format("| only in candidate | {} |\n\n", r.only_candidate.size());
  md += fmt::format(
      "Geomean candidate / baseline: {:.4f} over {} timed pair(s); best point per problem: {:.4f} "
      "over {} problem(s) ({} slower, {} faster, {} without a passed point in the "
      "candidate){}.\n\n",
      r.geomean_ratio,
      r.count(Verdict::kSame) + r.count(Verdict::kSlower) + r.count(Verdict::kFaster),
      r.best_geomean_ratio, r.best.size(), r.best_count(Verdict::kSlower),
      r.best_count(Verdict::kFaster), r.best_count(Verdict::kBroken),
      r.options.gate == CompareOptions::Gate::kBest ? " (the gate: --gate best)" : "");
  if (r.options.gate == CompareOptions::Gate::kBest) {
    std::string lines;
    for (const BestPair& b : r.best) {
      if (b.verdict != Verdict::kSlower && b.verdict != Verdict::kBroken) continue;
      lines +=
          fmt::format("| `{}` | {:.2f} | {} | {} |\n", cell(b.problem), b.baseline_us,
                      b.verdict == Verdict::kBroken ? "-" : fmt::format("{:.2f}", b.candidate_us),
                      b.verdict == Verdict::kBroken ? "no passed point"
                                                    : pct(b.candidate_us / b.baseline_us - 1.0));
    }
    if (!lines.empty())
      md +=
          "### Problems whose best point regressed\n\n| problem | baseline best us | candidate "
          "best us | change |\n|---|---:|---:|---:|\n" +
          lines + "\n";
  }

  if (r.options.defaults) {
    md += fmt::format(
        "Tuned defaults ({}): {} problem(s), {} slower, {} faster, {} gone from the candidate, {} "
        "not measured in the baseline{}.\n\n",
        r.options.defaults->origin, r.defaults.size(), r.defaults_count(Verdict::kSlower),
        r.defaults_count(Verdict::kFaster), r.defaults_count(Verdict::kBroken),
        r.defaults_count(Verdict::kNotComparable),
        r.options.gate == CompareOptions::Gate::kDefault ? " (the gate: --gate default)" : "");
    std::string lines;
    for (const BestPair& b : r.defaults) {
      if (b.verdict != Verdict::kSlower && b.verdict != Verdict::kBroken) continue;
      lines +=
          fmt::format("| `{}` | `{}` | {:.2f} | {} | {} |\n", cell(b.problem),
                      cell(b.baseline_point), b.baseline_us,
                      b.verdict == Verdict::kBroken ? "-" : fmt::format("{:.2f}", b.candidate_us),
                      b.verdict == Verdict::kBroken ? "no passed row"
                                                    : pct(b.candidate_us / b.baseline_us - 1.0));
    }
    if (!lines.empty())
      md +=
          "### Problems whose tuned default regressed\n\n| problem | point | baseline us | "
          "candidate us | change |\n|---|---|---:|---:|---:|\n" +
          lines + "\n";
  }

  const std::string header =
      "| kernel | problem | P | baseline us | candidate us | change | tolerance | status |\n"
      "|---|---|---:|---:|---:|---:|---:|---|\n";
  auto row_line = [](const ComparePair& p) {
    const bool timed = has_time(p.baseline) && has_time(p.candidate) &&
                       p.verdict != Verdict::kBroken && p.verdict != Verdict::kFixed;
    return fmt::format("| `{}` | `{}` | {} | {} | {} | {} | {} | {} |\n", cell(p.baseline.kernel),
                       cell(p.baseline.problem.name), split_label(p.baseline.partitions),
                       time_cell(p.baseline), time_cell(p.candidate), timed ? pct(p.change) : "-",
                       timed ? fmt::format("{:.1f}%", 100 * p.tolerance) : "-",
                       cell(pair_status(p)));
  };

  std::vector<const ComparePair*> bad, good;
  for (const ComparePair& p : r.pairs) {
    if (p.is_regression()) bad.push_back(&p);
    if (p.verdict == Verdict::kFaster || p.verdict == Verdict::kFixed) good.push_back(&p);
  }
  // Worst first: broken rows, then by how far past their tolerance they are.
  auto excess = [](const ComparePair* p) {
    if (p->verdict == Verdict::kBroken || p->verdict == Verdict::kFixed) return 1e30;
    return std::fabs(p->change) - p->tolerance;
  };
  std::stable_sort(bad.begin(), bad.end(), [&](const ComparePair* a, const ComparePair* b) {
    return excess(a) > excess(b);
  });
  std::stable_sort(good.begin(), good.end(), [&](const ComparePair* a, const ComparePair* b) {
    return excess(a) > excess(b);
  });

  if (!bad.empty()) {
    md += "### Regressions (worst first)\n\n" + header;
    for (const ComparePair* p : bad) md += row_line(*p);
    md += "\n";
  }
  std::vector<const ComparePair*> ambiguous, throttled;
  for (const ComparePair& p : r.pairs) {
    if (p.verdict == Verdict::kAmbiguous) ambiguous.push_back(&p);
    if (p.baseline.throttled || p.candidate.throttled) throttled.push_back(&p);
  }
  if (!ambiguous.empty()) {
    md += "### Ambiguous: moved, but the samples show no shift\n\n" + header;
    for (const ComparePair* p : ambiguous) md += row_line(*p);
    md += "\n";
  }
  if (!throttled.empty()) {
    // Gated like the others, and named: a clock held down moves a time without the code.
    md += fmt::format("### Throttled while timed ({}: power, thermal or clock slowdown)\n\n",
                      throttled.size()) +
          header;
    for (size_t i = 0; i < throttled.size() && i < kMaxListed; ++i) md += row_line(*throttled[i]);
    if (throttled.size() > kMaxListed)
      md += fmt::format("\n... and {} more\n", throttled.size() - kMaxListed);
    md += "\n";
  }
  if (!good.empty()) {
    md += "### Improvements\n\n" + header;
    for (const ComparePair* p : good) md += row_line(*p);
    md += "\n";
  }
  auto one_side = [&](const char* title, const std::vector<ResultRow>& rows) {
    if (rows.empty()) return;
    md += fmt::format(
        "### {} ({})\n\n| kernel | problem | P | status | median us |\n"
        "|---|---|---:|---|---:|\n",
        title, rows.size());
    for (size_t i = 0; i < rows.size() && i < kMaxListed; ++i) {
      const ResultRow& row = rows[i];
      md +=
          fmt::format("| `{}` | `{}` | {} | {} | {} |\n", cell(row.kernel), cell(row.problem.name),
                      split_label(row.partitions), status_name(row.status), time_cell(row));
    }
    if (rows.size() > kMaxListed)
      md += fmt::format("\n... and {} more\n", rows.size() - kMaxListed);
    md += "\n";
  };
  one_side("Only in baseline", r.only_baseline);
  one_side("Only in candidate", r.only_candidate);
  return md;
}

std::string compare_csv(const CompareResult& r) {
  std::string text =
      csv_line({"kernel", "problem", "partitions", "verdict", "baseline_status", "candidate_status",
                "baseline_median_us", "candidate_median_us", "baseline_stdev_us",
                "candidate_stdev_us", "baseline_samples", "candidate_samples", "change",
                "tolerance", "p_value", "candidate_reason"});
  auto d = [](double v) { return fmt::format("{}", v); };
  for (const ComparePair& p : r.pairs) {
    text += csv_line(
        {p.baseline.kernel, p.baseline.problem.name, std::to_string(p.baseline.partitions),
         verdict_name(p.verdict), status_name(p.baseline.status), status_name(p.candidate.status),
         d(p.baseline.time.median_us), d(p.candidate.time.median_us), d(p.baseline.time.stdev_us),
         d(p.candidate.time.stdev_us), std::to_string(p.baseline.time.samples),
         std::to_string(p.candidate.time.samples), d(p.change), d(p.tolerance),
         p.p_value < 0 ? "" : d(p.p_value), p.candidate.reason});
  }
  auto one_side = [&](const std::vector<ResultRow>& rows, bool is_baseline) {
    for (const ResultRow& row : rows) {
      const std::string status = status_name(row.status);
      const std::string median = d(row.time.median_us), stdev = d(row.time.stdev_us);
      const std::string samples = std::to_string(row.time.samples);
      text +=
          csv_line({row.kernel, row.problem.name, std::to_string(row.partitions),
                    is_baseline ? "only_baseline" : "only_candidate", is_baseline ? status : "",
                    is_baseline ? "" : status, is_baseline ? median : "", is_baseline ? "" : median,
                    is_baseline ? stdev : "", is_baseline ? "" : stdev, is_baseline ? samples : "",
                    is_baseline ? "" : samples, "", "", "", is_baseline ? "" : row.reason});
    }
  };
  one_side(r.only_baseline, true);
  one_side(r.only_candidate, false);
  return text;
}

int run_compare(const std::string& baseline_path, const std::string& candidate_path,
                const CompareOptions& options, const std::string& csv_path,
                const std::string& markdown_path) {
  if (!(options.threshold >= 0))
    throw UsageError("--threshold: must be a fraction >= 0, e.g. 0.03");
  const Report baseline = read_report_json(baseline_path);
  const Report candidate = read_report_json(candidate_path);
  const CompareResult result =
      compare_reports(baseline, candidate, options, baseline_path, candidate_path);
  const std::string md = compare_markdown(result);
  std::fputs(md.c_str(), stdout);
  std::fflush(stdout);
  if (!markdown_path.empty()) write_text_file_atomic(markdown_path, md);
  if (!csv_path.empty()) write_text_file_atomic(csv_path, compare_csv(result));
  return result.exit_code();
}

}  // namespace mha
