// `mha-tune merge`: a report split into shards merges back to the same rows; duplicates,
// missing shards and reports of other sweeps or GPU models are caught.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "common/errors.h"
#include "reports/journal.h"
#include "reports/merge.h"
#include "reports/report_json.h"
#include "sweep/sharding.h"
#include "tests/test_support.h"

namespace mha {
namespace {

std::string temp_path(const std::string& name) { return testing::temp_path("test_merge", name); }

RunMetadata sweep_meta() {
  RunMetadata m;
  m.git_commit = "abc123";
  m.gpu_name = "NVIDIA H200";
  m.sm_count = 132;
  m.timestamp = "2026-11-29T14:00:00Z";
  m.config_file = "configs/suites/default.json";
  m.config_hash = "cbf29ce484222325";
  m.command_line = "build/mha-tune sweep --config configs/suites/default.json --seed 7";
  m.timing_mode = "graph";
  return m;
}

std::vector<ResultRow> sweep_rows() {
  std::vector<ResultRow> rows;
  for (int k = 0; k < 4; ++k) {
    for (int n : {512, 4096, 32768}) {
      for (int p : {1, 4}) {
        ResultRow r;
        r.kernel = "decode_bf16_d128_g4_contig_null_bm16_bn" + std::to_string(32 << k) + "_t128_s4";
        r.problem.name = "b1_h32_kv8_d128_n" + std::to_string(n);
        r.problem.keys = n;
        r.partitions = p;
        r.status = Status::kPassed;
        r.time.median_us = n / 1000.0 + k + p;
        rows.push_back(r);
      }
    }
  }
  return rows;
}

// Splits `rows` as a sweep with --shard K/3 would and writes one report per shard.
std::vector<std::string> write_shards(const std::vector<ResultRow>& rows, const std::string& tag) {
  std::vector<SweepPoint> points;
  for (const ResultRow& r : rows)
    points.push_back({point_key(r), point_cost(r.problem, r.partitions)});
  const std::vector<int> shard = assign_shards(points, 3);
  std::vector<std::string> files;
  for (int s = 0; s < 3; ++s) {
    RunMetadata m = sweep_meta();
    m.command_line +=
        " --shard " + std::to_string(s) + "/3 --out results/shards/shard_" + std::to_string(s);
    m.shard_index = s;
    m.shard_count = 3;
    m.devices = "node" + std::to_string(s) + ":0";
    m.gpu_uuids = "GPU-" + std::to_string(s);
    m.gpu_pci_bus_ids = "00000000:3" + std::to_string(s) + ":00.0";
    m.wall_time_s = 10.0 + s;
    std::vector<ResultRow> mine;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (in_shard(shard, i, s)) mine.push_back(rows[i]);
    }
    files.push_back(temp_path(tag + "_shard_" + std::to_string(s) + ".json"));
    write_report_json(files.back(), m, mine);
  }
  return files;
}

std::map<std::string, double> median_by_key(const std::vector<ResultRow>& rows) {
  std::map<std::string, double> out;
  for (const ResultRow& r : rows) out[point_key(r)] = r.time.median_us;
  return out;
}

TEST(Merge, ShardsRoundTrip) {
  const std::vector<ResultRow> rows = sweep_rows();
  const std::vector<std::string> files = write_shards(rows, "roundtrip");
  const std::string out = temp_path("roundtrip_merged");
  EXPECT_EQ(run_merge({files[2], files[0], files[1]}, out, false), kExitOk);
  const Report merged = read_report_json(out + ".json");
  EXPECT_EQ(merged.rows.size(), rows.size());
  EXPECT_EQ(median_by_key(merged.rows), median_by_key(rows));
  EXPECT_EQ(merged.meta.shard_index, -1);
  EXPECT_EQ(merged.meta.shard_count, 0);
  EXPECT_EQ(merged.meta.devices, "node0:0,node1:0,node2:0");
  // Every shard's GPUs, as devices; the wall time of the longest shard (they run side by side).
  EXPECT_EQ(merged.meta.gpu_uuids, "GPU-0,GPU-1,GPU-2");
  EXPECT_EQ(merged.meta.gpu_pci_bus_ids, "00000000:30:00.0,00000000:31:00.0,00000000:32:00.0");
  EXPECT_DOUBLE_EQ(merged.meta.wall_time_s, 12.0);
  EXPECT_EQ(merged.meta.gpu_name, "NVIDIA H200");
  EXPECT_TRUE(std::filesystem::exists(out + ".csv"));
}

TEST(Merge, DuplicateRowIsReportedAndFirstKept) {
  std::vector<ResultRow> rows = sweep_rows();
  std::vector<MergeInput> inputs;
  for (int s = 0; s < 2; ++s) {
    RunMetadata m = sweep_meta();
    m.shard_index = s;
    m.shard_count = 2;
    std::vector<ResultRow> mine(rows.begin() + s * 12, rows.begin() + s * 12 + 12);
    inputs.push_back({"s" + std::to_string(s) + ".json", {m, mine}});
  }
  ResultRow dup = rows[0];
  dup.time.median_us = 999;
  inputs[1].report.rows.push_back(dup);
  const MergeResult merged = merge_reports(inputs, false);
  ASSERT_EQ(merged.duplicates.size(), 1u);
  EXPECT_NE(merged.duplicates[0].find(point_key(rows[0])), std::string::npos);
  EXPECT_NE(merged.duplicates[0].find("s0.json and s1.json"), std::string::npos);
  EXPECT_EQ(median_by_key(merged.rows)[point_key(rows[0])], rows[0].time.median_us);
  EXPECT_TRUE(merged.complete());
}

TEST(Merge, ReportsWithoutRowsAreRefused) {
  RunMetadata m = sweep_meta();
  EXPECT_THROW(merge_reports({{"empty.json", {m, {}}}}, false), UsageError);
  m.shard_index = 1;
  m.shard_count = 2;
  RunMetadata m0 = m;
  m0.shard_index = 0;
  EXPECT_THROW(merge_reports({{"s0.json", {m0, {}}}, {"s1.json", {m, {}}}}, false), UsageError);
}

TEST(Merge, AReportClaimingTooManyShardsIsRefused) {
  // A report claiming 2^31 shards listed every missing one (9 GB).
  const std::vector<std::string> files = write_shards(sweep_rows(), "claims");
  Report r = read_report_json(files[0]);
  r.meta.shard_index = 0;
  r.meta.shard_count = 1 << 30;
  try {
    merge_reports({{"claims.json", r}}, false);
    FAIL() << "2^30 shards accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "claims.json: metadata.shard_count: 1073741824 is not in [0, 4096]"),
              std::string::npos)
        << e.what();
  }
}

TEST(Merge, MissingShardExitsOne) {
  const std::vector<std::string> files = write_shards(sweep_rows(), "missing");
  const MergeResult merged = merge_reports(
      {{files[0], read_report_json(files[0])}, {files[2], read_report_json(files[2])}}, false);
  EXPECT_EQ(merged.missing_shards, std::vector<int>{1});
  EXPECT_EQ(run_merge({files[0], files[2]}, temp_path("missing_merged"), false), kExitFailure);
}

TEST(Merge, DifferentGpuRefusedUnlessAllowed) {
  std::vector<MergeInput> inputs(2);
  for (int s = 0; s < 2; ++s) {
    inputs[s].file = "s" + std::to_string(s) + ".json";
    inputs[s].report.meta = sweep_meta();
    inputs[s].report.meta.shard_index = s;
    inputs[s].report.meta.shard_count = 2;
    inputs[s].report.rows = {sweep_rows()[s]};
  }
  inputs[1].report.meta.gpu_name = "NVIDIA H100 80GB HBM3";
  try {
    merge_reports(inputs, false);
    FAIL() << "different GPUs merged";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_name"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(merge_reports(inputs, true));
}

TEST(Merge, DifferentSweepRefused) {
  std::vector<MergeInput> inputs(2);
  for (int s = 0; s < 2; ++s) {
    inputs[s].file = "s" + std::to_string(s) + ".json";
    inputs[s].report.meta = sweep_meta();
    inputs[s].report.meta.shard_index = s;
    inputs[s].report.meta.shard_count = 2;
  }
  inputs[1].report.meta.config_hash = "0000000000000000";
  EXPECT_THROW(merge_reports(inputs, false), UsageError);
  inputs[1].report.meta.config_hash = inputs[0].report.meta.config_hash;
  inputs[1].report.meta.command_line += " --warm";
  EXPECT_THROW(merge_reports(inputs, false), UsageError);
  inputs[1].report.meta.command_line = inputs[0].report.meta.command_line;
  inputs[1].report.meta.shard_count = 3;  // shards of another split
  EXPECT_THROW(merge_reports(inputs, false), UsageError);
}

TEST(Merge, SweepIdentityIgnoresPerShardOptions) {
  RunMetadata a = sweep_meta(), b = sweep_meta();
  a.command_line =
      "build/mha-tune sweep --config c.json --shard 0/8 --out results/shards/shard_0 --seed 7";
  b.command_line =
      "/scratch/mha-tune sweep --shard=5/8 --config c.json --out=x --device 1 --resume --seed 7";
  EXPECT_EQ(sweep_identity(a), "sweep --config c.json --seed 7");
  EXPECT_EQ(sweep_identity(a), sweep_identity(b));
  b.command_line += " --warm";
  EXPECT_NE(sweep_identity(a), sweep_identity(b));
}

TEST(Merge, ShardFieldsRoundTripAndOldReportsLoad) {
  RunMetadata m = sweep_meta();
  m.shard_index = 2;
  m.shard_count = 5;
  m.devices = "node3:0,node3:1";
  const RunMetadata back = metadata_from_json(to_json_value(m), "m");
  EXPECT_EQ(back.shard_index, 2);
  EXPECT_EQ(back.shard_count, 5);
  EXPECT_EQ(back.devices, "node3:0,node3:1");
  nlohmann::json old = to_json_value(sweep_meta());
  old.erase("shard_index");
  old.erase("shard_count");
  old.erase("devices");
  const RunMetadata loaded = metadata_from_json(old, "old");
  EXPECT_EQ(loaded.shard_index, -1);
  EXPECT_EQ(loaded.shard_count, 0);
}

}  // namespace
}  // namespace mha
