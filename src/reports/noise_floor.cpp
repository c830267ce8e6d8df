// Deriving, storing and applying the cross-machine noise floor of `compare`.
#include "reports/noise_floor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include "common/errors.h"
#include "common/stats.h"
#include "reports/journal.h"

namespace mha {

using nlohmann::json;

namespace {

bool timed_pass(const ResultRow& r) {
  return r.status == Status::kPassed && r.time.median_us > 0 && std::isfinite(r.time.median_us);
}

const json& need(const json& j, const std::string& where, const std::string& key) {
  if (!j.is_object()) throw UsageError(where + ": expected a JSON object");
  auto it = j.find(key);
  if (it == j.end()) throw UsageError(where + "." + key + ": missing");
  return *it;
}

double need_number(const json& j, const std::string& where, const std::string& key) {
  const json& v = need(j, where, key);
  if (!v.is_number())
    throw UsageError(fmt::format("{}.{}: expected a number, got {}", where, key, v.dump()));
  return v.get<double>();
}

std::string need_string(const json& j, const std::string& where, const std::string& key) {
  const json& v = need(j, where, key);
  if (!v.is_string())
    throw UsageError(fmt::format("{}.{}: expected a string, got {}", where, key, v.dump()));
  return v.get<std::string>();
}

std::string pct(double x) { return fmt::format("{:.1f}%", 100.0 * x); }

std::string range_text(const NoiseFloor& f, size_t i) {
  const NoiseBucket& b = f.buckets[i];
  if (f.buckets.size() == 1) return "all";
  if (i == 0) return fmt::format("< {:g} us", b.max_us);
  if (i + 1 == f.buckets.size()) return fmt::format(">= {:g} us", b.min_us);
  return fmt::format("{:g}-{:g} us", b.min_us, b.max_us);
}

// How the file records a report: its path from the working directory when it lies below it (the
// repository's own reports), else its name alone: an absolute path names nothing on another
// machine, and a temporary one nothing at all.
std::string recorded_name(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return std::filesystem::path(path).filename().string();
  const std::filesystem::path relative = absolute.lexically_normal().lexically_relative(cwd);
  if (!relative.empty() && *relative.begin() != "..") return relative.generic_string();
  return absolute.filename().string();
}

constexpr double kMaxNoiseTolerance = 0.25;

}  // namespace

double NoiseFloor::tolerance_for(double baseline_us) const {
  if (buckets.empty()) return 0;
  for (const NoiseBucket& b : buckets)
    if (baseline_us < b.max_us) return b.tolerance;
  return buckets.back().tolerance;
}

NoiseFloor derive_noise_floor(const Report& a, const Report& b, const NoiseOptions& o,
                              const std::string& file_a, const std::string& file_b) {
  const std::string name_a = file_a.empty() ? "first report" : file_a;
  const std::string name_b = file_b.empty() ? "second report" : file_b;
  if (!(o.quantile > 0 && o.quantile <= 1))
    throw UsageError(fmt::format("--quantile: {} is not in (0, 1], e.g. 0.99", o.quantile));
  if (!(o.margin >= 1) || !std::isfinite(o.margin))
    throw UsageError(
        fmt::format("--margin: {} is not a finite number >= 1 (it widens the quantile)", o.margin));
  if (o.min_bucket_pairs < 1)
    throw UsageError(fmt::format("--min-pairs: {} is below 1", o.min_bucket_pairs));
  if (a.meta.gpu_name != b.meta.gpu_name && !o.allow_different_gpu)
    throw UsageError(fmt::format(
        "{}: metadata.gpu_name: '{}' differs from '{}' in {}; a noise floor compares two "
        "machines of one GPU model",
        name_b, b.meta.gpu_name, a.meta.gpu_name, name_a));

  NoiseFloor f;
  f.gpu_name = a.meta.gpu_name;
  f.report_a = recorded_name(file_a);
  f.report_b = recorded_name(file_b);
  f.commit_a = a.meta.git_commit;
  f.commit_b = b.meta.git_commit;
  f.quantile = o.quantile;
  f.margin = o.margin;
  if (a.meta.git_commit != b.meta.git_commit)
    f.warnings.push_back(
        fmt::format("metadata.git_commit differs ({} vs {}): the floor holds any code change too",
                    a.meta.git_commit, b.meta.git_commit));
  if (!a.meta.gpu_uuids.empty() && a.meta.gpu_uuids == b.meta.gpu_uuids)
    f.warnings.push_back(fmt::format(
        "metadata.gpu_uuids: both reports come from the same GPU ({}): the floor holds run-to-run "
        "noise, not the spread between machines",
        a.meta.gpu_uuids));
  if (a.meta.config_hash != b.meta.config_hash)
    f.warnings.push_back(fmt::format("metadata.config_hash differs ({} vs {})", a.meta.config_hash,
                                     b.meta.config_hash));

  // (octave of the pair's geometric-mean time, |ln(b / a)|) for every point both passed with a
  // time: the same for (A, B) and (B, A), so the floor does not depend on which machine was the
  // baseline (bucketed by A's time, the reverse comparison of the floor's own two reports failed
  // a row that sat near an octave boundary).
  std::map<std::string, const ResultRow*> index_b;
  for (const ResultRow& r : b.rows) index_b[point_key(r)] = &r;
  std::map<int, std::vector<double>> by_octave;
  for (const ResultRow& ra : a.rows) {
    auto it = index_b.find(point_key(ra));
    if (it == index_b.end() || !timed_pass(ra) || !timed_pass(*it->second)) continue;
    const int octave = static_cast<int>(
        std::floor(std::log2(pair_time_us(ra.time.median_us, it->second->time.median_us))));
    by_octave[octave].push_back(
        std::fabs(std::log(it->second->time.median_us / ra.time.median_us)));
    ++f.pairs;
  }
  if (f.pairs < o.min_bucket_pairs)
    throw UsageError(fmt::format(
        "{} and {}: only {} point(s) passed in both with a time; a noise floor needs at least {}",
        name_a, name_b, f.pairs, o.min_bucket_pairs));

  // Octaves merged upward until a bucket holds min_bucket_pairs; a short tail joins the last.
  std::vector<std::pair<std::pair<int, int>, std::vector<double>>> groups;
  std::vector<double> open;
  int open_first = 0;
  for (auto& [octave, values] : by_octave) {
    if (open.empty()) open_first = octave;
    open.insert(open.end(), values.begin(), values.end());
    if (static_cast<int>(open.size()) >= o.min_bucket_pairs) {
      groups.push_back({{open_first, octave}, std::move(open)});
      open.clear();
    }
  }
  if (!open.empty()) {
    groups.back().first.second = by_octave.rbegin()->first;
    groups.back().second.insert(groups.back().second.end(), open.begin(), open.end());
  }
  for (const auto& [octaves, values] : groups) {
    NoiseBucket bucket;
    bucket.min_us = std::ldexp(1.0, octaves.first);
    bucket.max_us = std::ldexp(1.0, octaves.second + 1);
    bucket.pairs = static_cast<int>(values.size());
    const double q = quantile(values, o.quantile);
    bucket.quantile_change = std::expm1(q);
    bucket.max_change = std::expm1(*std::max_element(values.begin(), values.end()));
    bucket.tolerance = std::expm1(o.margin * q);
    if (!(bucket.tolerance <= kMaxNoiseTolerance))
      throw UsageError(fmt::format(
          "{} and {}: their times differ by {:.0f}% ({} x the {} quantile) from {:g} to {:g} us, "
          "more than a floor may excuse ({:.0f}%): not the same code on two machines of one model?",
          name_a, name_b, 100 * bucket.tolerance, o.margin, o.quantile, bucket.min_us,
          bucket.max_us, 100 * kMaxNoiseTolerance));
    f.buckets.push_back(bucket);
  }
  return f;
}

json noise_floor_to_json(const NoiseFloor& f) {
  json buckets = json::array();
  for (const NoiseBucket& b : f.buckets)
    buckets.push_back({{"min_us", b.min_us},
                       {"max_us", b.max_us},
                       {"pairs", b.pairs},
                       {"quantile_change", b.quantile_change},
                       {"max_change", b.max_change},
                       {"tolerance", b.tolerance}});
  return {{"format", kNoiseFloorFormat}, {"version", kNoiseFloorVersion},
          {"gpu_name", f.gpu_name},      {"report_a", f.report_a},
          {"report_b", f.report_b},      {"commit_a", f.commit_a},
          {"commit_b", f.commit_b},      {"quantile", f.quantile},
          {"margin", f.margin},          {"pairs", f.pairs},
          {"warnings", f.warnings},      {"buckets", buckets}};
}

NoiseFloor noise_floor_from_json(const json& j, const std::string& file) {
  const std::string w = file + ":";
  if (!j.is_object() || !j.contains("format") || j["format"] != kNoiseFloorFormat)
    throw UsageError(
        fmt::format("{} format: not a noise floor file (\"format\": \"{}\" expected; "
                    "write one with `mha-tune noise A.json B.json --out FILE`)",
                    w, kNoiseFloorFormat));
  if (need_number(j, w, "version") != kNoiseFloorVersion)
    throw UsageError(fmt::format("{} version: not {}", w, kNoiseFloorVersion));
  NoiseFloor f;
  f.file = file;
  f.gpu_name = need_string(j, w, "gpu_name");
  f.report_a = need_string(j, w, "report_a");
  f.report_b = need_string(j, w, "report_b");
  if (j.contains("commit_a")) f.commit_a = need_string(j, w, "commit_a");
  if (j.contains("commit_b")) f.commit_b = need_string(j, w, "commit_b");
  f.quantile = need_number(j, w, "quantile");
  f.margin = need_number(j, w, "margin");
  f.pairs = static_cast<int>(need_number(j, w, "pairs"));
  // A copy: a reference returned through the temporary key string is what g++ 13 warns about.
  const json buckets = need(j, w, "buckets");
  if (!buckets.is_array() || buckets.empty())
    throw UsageError(w + " buckets: expected a non-empty array");
  double last_max = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const std::string where = fmt::format("{} buckets[{}]", w, i);
    NoiseBucket b;
    b.min_us = need_number(buckets[i], where, "min_us");
    b.max_us = need_number(buckets[i], where, "max_us");
    b.pairs = static_cast<int>(need_number(buckets[i], where, "pairs"));
    b.quantile_change = need_number(buckets[i], where, "quantile_change");
    b.max_change = need_number(buckets[i], where, "max_change");
    b.tolerance = need_number(buckets[i], where, "tolerance");
    // Two machines of one model differ by 2-8% (docs/design.md); a floor wider than 25% would
    // pass the regressions a gate exists to catch.
    if (!(b.tolerance >= 0) || !(b.tolerance <= kMaxNoiseTolerance))
      throw UsageError(fmt::format("{}.tolerance: {} is not a fraction in [0, {}]", where,
                                   b.tolerance, kMaxNoiseTolerance));
    if (!(b.max_us > b.min_us) || b.min_us < last_max)
      throw UsageError(where + ": min_us/max_us: ranges must ascend without overlap");
    last_max = b.max_us;
    f.buckets.push_back(b);
  }
  return f;
}

NoiseFloor read_noise_floor(const std::string& path) {
  return noise_floor_from_json(read_json_file(path, "the noise floor"), path);
}

void check_noise_floor_applies(const NoiseFloor& f, const RunMetadata& baseline,
                               const std::string& baseline_file) {
  if (f.gpu_name == baseline.gpu_name) return;
  throw UsageError(
      fmt::format("{}: gpu_name: the noise floor was measured on '{}', the baseline {} on '{}'",
                  f.file.empty() ? "--noise" : f.file, f.gpu_name,
                  baseline_file.empty() ? "report" : baseline_file, baseline.gpu_name));
}

std::string noise_floor_markdown(const NoiseFloor& f) {
  std::string ranges;
  for (size_t i = 0; i < f.buckets.size(); ++i)
    ranges += fmt::format("{}{}: {}", i ? ", " : "", range_text(f, i), pct(f.buckets[i].tolerance));
  return fmt::format(
      "- Cross-machine noise floor `{}` (measured between `{}` and `{}`, {} pairs, {:g} quantile "
      "x {:g}): a pair is also within noise when its change is inside the tolerance of its "
      "baseline time range ({}).\n",
      f.file.empty() ? "-" : f.file, f.report_a, f.report_b, f.pairs, f.quantile, f.margin, ranges);
}

std::string noise_floor_table(const NoiseFloor& f) {
  std::string t = fmt::format("{:<18} {:>6} {:>10} {:>8} {:>10}\n", "baseline time", "pairs",
                              fmt::format("q{:g}", f.quantile), "max", "tolerance");
  for (size_t i = 0; i < f.buckets.size(); ++i) {
    const NoiseBucket& b = f.buckets[i];
    t += fmt::format("{:<18} {:>6} {:>10} {:>8} {:>10}\n", range_text(f, i), b.pairs,
                     pct(b.quantile_change), pct(b.max_change), pct(b.tolerance));
  }
  return t;
}

int run_noise(const std::string& path_a, const std::string& path_b, const std::string& out_path,
              const NoiseOptions& options) {
  const Report a = read_report_json(path_a);
  const Report b = read_report_json(path_b);
  NoiseFloor f = derive_noise_floor(a, b, options, path_a, path_b);
  for (const std::string& w : f.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::fputs(fmt::format("cross-machine noise floor, {} ({} pairs):\n{}", f.gpu_name, f.pairs,
                         noise_floor_table(f))
                 .c_str(),
             stdout);
  write_text_file_atomic(out_path, noise_floor_to_json(f).dump(2) + "\n");
  std::printf("wrote %s\n", out_path.c_str());
  return kExitOk;
}

}  // namespace mha
