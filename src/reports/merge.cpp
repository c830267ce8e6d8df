// Checks that reports are shards of one sweep and joins their rows and metadata.
#include "reports/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "reports/journal.h"
#include "reports/report_csv.h"
#include "sweep/sharding.h"

namespace mha {

namespace {

constexpr size_t kMaxListed = 20;  // duplicate keys printed; the rest are counted

// Options that differ between the shards of one sweep but not what is measured: the shard
// itself, where it writes, which local GPU ran it, and how it was started or printed.
enum class PerShard { kNo, kFlag, kWithValue };  // kWithValue: the next token is its value
PerShard per_shard_option(const std::string& token) {
  static const char* const kWithValue[] = {"--shard", "--out", "--device"};
  static const char* const kFlags[] = {"--resume", "--quiet"};
  for (const char* opt : kWithValue) {
    if (token == opt) return PerShard::kWithValue;
    if (token.rfind(std::string(opt) + "=", 0) == 0) return PerShard::kFlag;  // "--out=x"
  }
  for (const char* opt : kFlags) {
    if (token == opt) return PerShard::kFlag;
  }
  return PerShard::kNo;
}

std::string shard_label(const RunMetadata& m) {
  return m.shard_count > 0 ? fmt::format("shard {}/{}", m.shard_index, m.shard_count) : "unsharded";
}

// Refuses `b` unless its `what` equals `a`'s, naming both files and the values.
void require_same(const std::string& what, const std::string& a, const std::string& b,
                  const MergeInput& first, const MergeInput& other, const std::string& hint) {
  if (a == b) return;
  throw UsageError(fmt::format("{}: metadata.{}: '{}' differs from '{}' in {}; {}", other.file,
                               what, b, a, first.file, hint));
}

void check_shard_fields(const std::vector<MergeInput>& inputs) {
  const MergeInput& first = inputs.front();
  for (const MergeInput& in : inputs) {
    const RunMetadata& m = in.report.meta;
    if (m.shard_count != first.report.meta.shard_count) {
      throw UsageError(
          fmt::format("{}: metadata.shard_count: {} ({}) differs from {} in {} ({}); "
                      "these are not shards of one split",
                      in.file, m.shard_count, shard_label(m), first.report.meta.shard_count,
                      first.file, shard_label(first.report.meta)));
    }
    if (m.shard_count < 0 || m.shard_count > kMaxShards)
      throw UsageError(fmt::format("{}: metadata.shard_count: {} is not in [0, {}]", in.file,
                                   m.shard_count, kMaxShards));
    if (m.shard_count > 0 && (m.shard_index < 0 || m.shard_index >= m.shard_count)) {
      throw UsageError(fmt::format("{}: metadata.shard_index: {} is not in [0, {})", in.file,
                                   m.shard_index, m.shard_count));
    }
  }
}

// Distinct entries of one comma-separated metadata list (devices, gpu_uuids, ...), in order of
// first appearance.
std::string join_devices(const std::vector<const MergeInput*>& inputs,
                         std::string RunMetadata::*field = &RunMetadata::devices) {
  std::vector<std::string> seen;
  for (const MergeInput* in : inputs) {
    std::stringstream list(in->report.meta.*field);
    for (std::string d; std::getline(list, d, ',');) {
      if (!d.empty() && std::find(seen.begin(), seen.end(), d) == seen.end()) seen.push_back(d);
    }
  }
  std::string joined;
  for (const std::string& d : seen) joined += (joined.empty() ? "" : ",") + d;
  return joined;
}

}  // namespace

std::string sweep_identity(const RunMetadata& meta) {
  std::stringstream tokens(meta.command_line);
  std::string token, identity;
  bool skip_value = false, program = true;
  while (tokens >> token) {
    if (program) {  // argv[0]: the binary's path differs between machines and job scripts
      program = false;
      continue;
    }
    if (skip_value) {
      skip_value = false;
      continue;
    }
    const PerShard kind = per_shard_option(token);
    if (kind != PerShard::kNo) {
      skip_value = kind == PerShard::kWithValue;
      continue;
    }
    identity += (identity.empty() ? "" : " ") + token;
  }
  return identity;
}

MergeResult merge_reports(const std::vector<MergeInput>& inputs, bool allow_different_gpu) {
  if (inputs.empty()) throw UsageError("merge: no reports given");
  const MergeInput& first = inputs.front();
  const std::string identity = sweep_identity(first.report.meta);
  for (const MergeInput& in : inputs) {
    const RunMetadata& m = in.report.meta;
    require_same("config_hash", first.report.meta.config_hash, m.config_hash, first, in,
                 "the shards ran different configs (not one sweep)");
    require_same("command_line", identity, sweep_identity(m), first, in,
                 "the shards ran different sweeps (compared without --shard, --out, --device, "
                 "--resume, --quiet)");
    if (!allow_different_gpu) {
      require_same("gpu_name", first.report.meta.gpu_name, m.gpu_name, first, in,
                   "timings from different GPU models do not belong in one report (pass "
                   "--allow-different-gpu to merge anyway)");
    }
  }
  check_shard_fields(inputs);

  MergeResult result;
  // Shard order, not argument order: a shell glob sorts shard_10 before shard_2.
  std::vector<const MergeInput*> ordered;
  for (const MergeInput& in : inputs) ordered.push_back(&in);
  std::stable_sort(ordered.begin(), ordered.end(), [](const MergeInput* a, const MergeInput* b) {
    return a->report.meta.shard_index < b->report.meta.shard_index;
  });

  result.shard_count = first.report.meta.shard_count;
  std::map<int, const MergeInput*> by_shard;
  for (const MergeInput* in : ordered) {
    if (result.shard_count == 0) break;
    auto [it, fresh] = by_shard.emplace(in->report.meta.shard_index, in);
    if (!fresh) {
      result.warnings.push_back(fmt::format("{} and {} both hold {}", it->second->file, in->file,
                                            shard_label(in->report.meta)));
    }
  }
  for (int s = 0; s < result.shard_count; ++s) {
    if (!by_shard.count(s)) result.missing_shards.push_back(s);
  }

  std::map<std::string, const MergeInput*> owner;
  for (const MergeInput* in : ordered) {
    if (in->report.meta.git_commit != ordered.front()->report.meta.git_commit) {
      result.warnings.push_back(fmt::format("{} was measured by commit {}, {} by {}", in->file,
                                            in->report.meta.git_commit, ordered.front()->file,
                                            ordered.front()->report.meta.git_commit));
    }
    for (const ResultRow& row : in->report.rows) {
      const std::string key = point_key(row);
      auto [it, fresh] = owner.emplace(key, in);
      if (fresh) {
        result.rows.push_back(row);
      } else {
        result.duplicates.push_back(
            fmt::format("{} (in {} and {})", key, it->second->file, in->file));
      }
    }
  }

  // The lowest shard speaks for the run (its timestamp, peak bandwidth); each row keeps the
  // peak_fraction its own shard measured.
  result.meta = ordered.front()->report.meta;
  result.meta.shard_index = -1;
  result.meta.shard_count = 0;
  result.meta.devices = join_devices(ordered);
  result.meta.gpu_uuids = join_devices(ordered, &RunMetadata::gpu_uuids);
  result.meta.gpu_pci_bus_ids = join_devices(ordered, &RunMetadata::gpu_pci_bus_ids);
  // Shards run side by side (an array job): the merged sweep took as long as the longest.
  for (const MergeInput* in : ordered)
    result.meta.wall_time_s = std::max(result.meta.wall_time_s, in->report.meta.wall_time_s);
  // A merge of nothing would write an empty report that later gates pass on.
  if (result.rows.empty())
    throw UsageError(
        fmt::format("merge: the {} report(s) hold no rows: nothing to merge", inputs.size()));
  return result;
}

int run_merge(const std::vector<std::string>& files, const std::string& out_prefix,
              bool allow_different_gpu) {
  if (out_prefix.empty()) throw UsageError("merge: --out PREFIX is required");
  std::vector<MergeInput> inputs;
  for (const std::string& f : files) inputs.push_back({f, read_report_json(f)});
  const MergeResult merged = merge_reports(inputs, allow_different_gpu);

  for (const std::string& w : merged.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (!merged.duplicates.empty()) {
    fmt::print(stderr,
               "warning: {} duplicate row(s), the same point in two reports; the first is kept:\n",
               merged.duplicates.size());
    for (size_t i = 0; i < merged.duplicates.size() && i < kMaxListed; ++i) {
      fmt::print(stderr, "  {}\n", merged.duplicates[i]);
    }
    if (merged.duplicates.size() > kMaxListed) {
      fmt::print(stderr, "  ... and {} more\n", merged.duplicates.size() - kMaxListed);
    }
  }

  const std::filesystem::path parent = std::filesystem::path(out_prefix).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  write_report_json(out_prefix + ".json", merged.meta, merged.rows);
  write_report_csv(out_prefix + ".csv", merged.rows);
  fmt::print("merged {} report(s), {} row(s): {}.json, {}.csv\n", files.size(), merged.rows.size(),
             out_prefix, out_prefix);

  if (merged.shard_count == 0) {
    fmt::print("the reports carry no shard metadata: completeness not checked\n");
  }
  if (!merged.complete()) {
    std::string missing;
    for (int s : merged.missing_shards)
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", s);
    fmt::print(stderr,
               "error: incomplete: shard(s) {} of {} missing (0..{}); the merged report lacks "
               "their rows\n",
               missing, merged.shard_count, merged.shard_count - 1);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace mha
