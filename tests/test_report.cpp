// Host tests for the JSON and CSV reports: every field round-trips, strict reading names the
// file and key, and CSV quoting follows RFC 4180.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/split_code.h"
#include "reports/report_csv.h"
#include "reports/report_json.h"
#include "tests/test_support.h"

namespace mha {
namespace {

std::string temp_path(const std::string& name) { return testing::temp_path("test_report", name); }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Every field set to a value different from its default.
ResultRow full_row() {
  ResultRow r;
  r.kernel = "decode_fp16_d64_g7_paged_window_sink_bm16_bn32_bk64_wm16_wn32_t256_s3_wsk";
  r.traits = {"fp16", "fp32", "e5m2", 64, 7,   "paged", "window", true,  true, 16,
              32,     64,     16,     32, 256, 3,       true,     49152, true};
  r.problem.name = "b3_h14_kv2_d64_n777_paged_window";
  r.problem.batch = 3;
  r.problem.heads = 14;
  r.problem.kv_heads = 2;
  r.problem.depth = 64;
  r.problem.dtype = "fp16";
  r.problem.out_dtype = "fp32";
  r.problem.kv_dtype = "e5m2";
  r.problem.kv_scale = "head";
  r.problem.soft_cap = 30;
  r.problem.kv = "paged";
  r.problem.page_size = 48;
  r.problem.mask = "window";
  r.problem.window = 100;
  r.problem.chunk = 5;
  r.problem.has_sink = true;
  r.problem.keys = 777;
  r.problem.q_len = 3;
  r.problem.lengths = "ragged:1,777,300";
  r.problem.ragged_lengths = {1, 777, 300};
  r.problem.ragged_q_lens = {0, 3, 1};
  r.partitions = 9;
  r.status = Status::kIncorrect;
  r.reason = "rel_l2 \"too\" high, see: a,b\nsecond line";
  r.time = timing_stats(12.5, 11.25, 12.75, 0.3125, 42);
  r.bytes = 123456789.0;
  r.achieved_gbps = 3456.5;
  r.peak_fraction = 0.78125;
  r.floor_us = 6.25;
  r.rel_l2_error = std::nan("");
  r.max_abs_error = INFINITY;
  r.sm_clock_mhz = 1980;
  r.throttled = true;
  r.device = 3;
  return r;
}

RunMetadata full_meta() {
  RunMetadata m;
  m.tool_version = "0.1.0";
  m.git_commit = "abc123";
  m.gpu_name = "NVIDIA H200";
  m.sm_count = 132;
  m.sm_clock_max_mhz = 1980;
  m.mem_clock_max_mhz = 3201;
  m.l2_bytes = 52428800;
  m.driver_version = "560.35";
  m.cuda_version = "12.6";
  m.timestamp = "2026-11-29T14:00:00Z";
  m.config_file = "configs/h200.json";
  m.config_hash = "cbf29ce484222325";
  m.command_line = "mha-tune sweep --config configs/h200.json";
  m.peak_read_gbps = 4450.5;
  m.seed = 18446744073709551557ull;
  m.timing_mode = "stream";
  m.cold_cache = false;
  return m;
}

void expect_same(const ResultRow& a, const ResultRow& b) {
  EXPECT_EQ(a.kernel, b.kernel);
  const KernelTraits &t = a.traits, &u = b.traits;
  EXPECT_EQ(t.dtype, u.dtype);
  EXPECT_EQ(t.out_dtype, u.out_dtype);
  EXPECT_EQ(t.depth, u.depth);
  EXPECT_EQ(t.group, u.group);
  EXPECT_EQ(t.kv, u.kv);
  EXPECT_EQ(t.mask, u.mask);
  EXPECT_EQ(t.has_sink, u.has_sink);
  EXPECT_EQ(t.bm, u.bm);
  EXPECT_EQ(t.bn, u.bn);
  EXPECT_EQ(t.bk, u.bk);
  EXPECT_EQ(t.wm, u.wm);
  EXPECT_EQ(t.wn, u.wn);
  EXPECT_EQ(t.threads, u.threads);
  EXPECT_EQ(t.stages, u.stages);
  EXPECT_EQ(t.warp_split_k, u.warp_split_k);
  EXPECT_EQ(t.smem_bytes, u.smem_bytes);
  const ProblemShape &p = a.problem, &q = b.problem;
  EXPECT_EQ(p.name, q.name);
  EXPECT_EQ(p.batch, q.batch);
  EXPECT_EQ(p.heads, q.heads);
  EXPECT_EQ(p.kv_heads, q.kv_heads);
  EXPECT_EQ(p.depth, q.depth);
  EXPECT_EQ(p.dtype, q.dtype);
  EXPECT_EQ(p.out_dtype, q.out_dtype);
  EXPECT_EQ(p.kv, q.kv);
  EXPECT_EQ(p.page_size, q.page_size);
  EXPECT_EQ(p.mask, q.mask);
  EXPECT_EQ(p.window, q.window);
  EXPECT_EQ(p.chunk, q.chunk);
  EXPECT_EQ(p.has_sink, q.has_sink);
  EXPECT_EQ(p.keys, q.keys);
  EXPECT_EQ(p.lengths, q.lengths);
  EXPECT_EQ(p.ragged_lengths, q.ragged_lengths);
  EXPECT_EQ(p.ragged_q_lens, q.ragged_q_lens);
  EXPECT_EQ(a.partitions, b.partitions);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.time.median_us, b.time.median_us);
  EXPECT_EQ(a.time.min_us, b.time.min_us);
  EXPECT_EQ(a.time.mean_us, b.time.mean_us);
  EXPECT_EQ(a.time.stdev_us, b.time.stdev_us);
  EXPECT_EQ(a.time.samples, b.time.samples);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.achieved_gbps, b.achieved_gbps);
  EXPECT_EQ(a.peak_fraction, b.peak_fraction);
  EXPECT_EQ(a.floor_us, b.floor_us);
  EXPECT_EQ(std::isnan(a.rel_l2_error), std::isnan(b.rel_l2_error));
  if (!std::isnan(a.rel_l2_error)) {
    EXPECT_EQ(a.rel_l2_error, b.rel_l2_error);
  }
  EXPECT_EQ(a.max_abs_error, b.max_abs_error);
  EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
  EXPECT_EQ(a.throttled, b.throttled);
  EXPECT_EQ(a.device, b.device);
}

TEST(ReportJson, StatusNamesRoundTrip) {
  for (Status s : {Status::kPassed, Status::kIncorrect, Status::kFailed, Status::kNotSupported,
                   Status::kSkipped}) {
    EXPECT_EQ(status_from_name(status_name(s)), s);
  }
  EXPECT_THROW(status_from_name("pased"), std::invalid_argument);
}

TEST(ReportJson, FileRoundTripsEveryField) {
  const std::string path = temp_path("roundtrip.json");
  ResultRow passed = full_row();
  passed.status = Status::kPassed;
  passed.reason = "";
  passed.rel_l2_error = 1.5e-3;
  passed.max_abs_error = 0.0078125;
  write_report_json(path, full_meta(), {full_row(), passed});
  const Report r = read_report_json(path);
  const RunMetadata m = full_meta();
  EXPECT_EQ(r.meta.schema_version, kReportSchemaVersion);
  EXPECT_EQ(r.meta.tool_version, m.tool_version);
  EXPECT_EQ(r.meta.git_commit, m.git_commit);
  EXPECT_EQ(r.meta.gpu_name, m.gpu_name);
  EXPECT_EQ(r.meta.sm_count, m.sm_count);
  EXPECT_EQ(r.meta.sm_clock_max_mhz, m.sm_clock_max_mhz);
  EXPECT_EQ(r.meta.mem_clock_max_mhz, m.mem_clock_max_mhz);
  EXPECT_EQ(r.meta.l2_bytes, m.l2_bytes);
  EXPECT_EQ(r.meta.driver_version, m.driver_version);
  EXPECT_EQ(r.meta.cuda_version, m.cuda_version);
  EXPECT_EQ(r.meta.timestamp, m.timestamp);
  EXPECT_EQ(r.meta.config_file, m.config_file);
  EXPECT_EQ(r.meta.config_hash, m.config_hash);
  EXPECT_EQ(r.meta.command_line, m.command_line);
  EXPECT_EQ(r.meta.peak_read_gbps, m.peak_read_gbps);
  EXPECT_EQ(r.meta.seed, m.seed);
  EXPECT_EQ(r.meta.timing_mode, m.timing_mode);
  EXPECT_EQ(r.meta.cold_cache, m.cold_cache);
  ASSERT_EQ(r.rows.size(), 2u);
  expect_same(r.rows[0], full_row());
  expect_same(r.rows[1], passed);
}

// The message of the UsageError thrown by reading `text` as a report.
std::string read_error(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  write_file(path, text);
  try {
    read_report_json(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ReportJson, BadInputNamesFileAndKey) {
  EXPECT_NE(read_error("bad.json", "{\"schema_version\": 1, \"metad").find("bad.json"),
            std::string::npos);
  nlohmann::json j = report_to_json(full_meta(), {full_row()});
  j["rows"][0]["problem"].erase("keys");
  const std::string missing = read_error("missing_key.json", j.dump());
  EXPECT_NE(missing.find("missing_key.json"), std::string::npos) << missing;
  EXPECT_NE(missing.find("rows[0].problem.keys"), std::string::npos) << missing;

  j = report_to_json(full_meta(), {full_row()});
  j["rows"][0]["status"] = "great";
  EXPECT_NE(read_error("bad_status.json", j.dump()).find("rows[0].status"), std::string::npos);

  j = report_to_json(full_meta(), {full_row()});
  j["metadata"]["sm_count"] = "many";
  EXPECT_NE(read_error("bad_type.json", j.dump()).find("metadata.sm_count"), std::string::npos);

  j = report_to_json(full_meta(), {full_row()});
  EXPECT_EQ(j["rows"][0]["problem"]["total_keys"], 1078);  // 1 + 777 + 300
  j["rows"][0]["problem"]["ragged_lengths"] = {1, 777};    // batch is 3
  EXPECT_NE(read_error("short_lengths.json", j.dump()).find("rows[0].problem.ragged_lengths"),
            std::string::npos);
  j["rows"][0]["problem"]["ragged_lengths"] = {1, 0, 300};
  EXPECT_NE(read_error("zero_length.json", j.dump()).find("ragged_lengths"), std::string::npos);
  j["rows"][0]["problem"].erase("ragged_lengths");  // older reports have none: still read
  EXPECT_EQ(read_error("old.json", j.dump()), "(no error)");

  // A ragged step's token counts: one per sequence, 0 .. q_len, their most q_len.
  j = report_to_json(full_meta(), {full_row()});
  EXPECT_EQ(j["rows"][0]["problem"]["ragged_q_lens"], nlohmann::json({0, 3, 1}));
  for (const nlohmann::json& bad : {nlohmann::json({0, 3}), nlohmann::json({0, 17, 1}),
                                    nlohmann::json({0, -1, 3}), nlohmann::json({0, 2, 1})}) {
    j["rows"][0]["problem"]["ragged_q_lens"] = bad;
    EXPECT_NE(read_error("bad_q_lens.json", j.dump()).find("rows[0].problem.ragged_q_lens"),
              std::string::npos)
        << bad.dump();
  }

  // Sizes past what a problem spec accepts (select and the time model size lists by them).
  for (const auto& [key, value] : {std::pair<const char*, long long>{"batch", 100000},
                                   {"batch", INT32_MAX},
                                   {"heads", 0},
                                   {"keys", 1LL << 25}}) {
    j = report_to_json(full_meta(), {full_row()});
    j["rows"][0]["problem"][key] = value;
    const std::string e = read_error("big_shape.json", j.dump());
    EXPECT_NE(e.find(std::string("rows[0].problem.") + key + ": " + std::to_string(value) +
                     " is not in [1, "),
              std::string::npos)
        << e;
  }

  j = report_to_json(full_meta(), {});
  j["schema_version"] = 99;
  EXPECT_NE(read_error("schema.json", j.dump()).find("schema_version"), std::string::npos);

  EXPECT_THROW(read_report_json(temp_path("does_not_exist.json")), UsageError);
}

TEST(ReportJson, TheSplitIsReadFromItsTextFormOrItsOldCode) {
  ResultRow row = full_row();
  row.partitions = encode_cluster_split(4);
  const std::string path = temp_path("split_forms.json");
  nlohmann::json j = report_to_json(full_meta(), {row});
  EXPECT_EQ(j["rows"][0]["split"], "cluster4");
  // The text form alone (a report that writes only it).
  j["rows"][0].erase("partitions");
  std::ofstream(path) << j.dump();
  EXPECT_EQ(read_report_json(path).rows[0].partitions, encode_cluster_split(4));
  // The integer code alone (reports written before the text form was read).
  j = report_to_json(full_meta(), {row});
  j["rows"][0].erase("split");
  std::ofstream(path) << j.dump();
  EXPECT_EQ(read_report_json(path).rows[0].partitions, encode_cluster_split(4));
  // Both, disagreeing; neither; a text that is no split.
  j = report_to_json(full_meta(), {row});
  j["rows"][0]["partitions"] = 4;
  EXPECT_NE(read_error("split_disagrees.json", j.dump())
                .find("rows[0].split: 'cluster4' disagrees with partitions 4"),
            std::string::npos);
  j["rows"][0].erase("partitions");
  j["rows"][0].erase("split");
  EXPECT_NE(read_error("no_split.json", j.dump()).find("rows[0].split"), std::string::npos);
  j["rows"][0]["split"] = "plan0x1";
  EXPECT_NE(read_error("bad_split.json", j.dump()).find("split 'plan0x1'"), std::string::npos);
}

TEST(ReportFiles, OutputsReplaceOnlyRegularFiles) {
  namespace fs = std::filesystem;
  const std::string target = temp_path("link_target.json"), link = temp_path("link.json");
  std::remove(link.c_str());
  write_file(target, "old");
  fs::create_symlink(target, link);
  write_text_file_atomic(link, "new");  // through the link: the link stays a link
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new");
  write_text_file_atomic("/dev/null", "discarded");  // a device is written, never replaced
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_THROW(write_text_file_atomic(fs::temp_directory_path().string(), "x"), UsageError);
}

TEST(ReportCsv, QuotesPerRfc4180) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_escape("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_line({"a", "b,c", ""}), "a,\"b,c\",\n");
}

// A minimal RFC 4180 reader, to check what the writer wrote parses back to the same fields.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, in_quotes = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      quoted = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      quoted = false;
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  rows.pop_back();  // after the last newline
  return rows;
}

TEST(ReportCsv, OneLinePerRowWithEveryColumn) {
  const std::string path = temp_path("report.csv");
  ResultRow second = full_row();
  second.reason = "";
  write_report_csv(path, {full_row(), second});
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 3u);
  const auto columns = report_csv_columns();
  EXPECT_EQ(rows[0], columns);
  for (const char* c : {"kernel",
                        "dtype",
                        "out_dtype",
                        "depth",
                        "group",
                        "kv",
                        "mask",
                        "has_sink",
                        "bm",
                        "bn",
                        "bk",
                        "wm",
                        "wn",
                        "threads",
                        "stages",
                        "warp_split_k",
                        "smem_bytes",
                        "partitions",
                        "split",
                        "plan_us",
                        "status",
                        "reason",
                        "median_us",
                        "min_us",
                        "mean_us",
                        "stdev_us",
                        "samples",
                        "bytes",
                        "achieved_gbps",
                        "peak_fraction",
                        "floor_us",
                        "time_over_floor",
                        "rel_l2_error",
                        "max_abs_error",
                        "sm_clock_mhz",
                        "throttled",
                        "device",
                        "batch",
                        "heads",
                        "kv_heads",
                        "keys"}) {
    EXPECT_NE(std::find(columns.begin(), columns.end(), c), columns.end()) << c;
  }
  ASSERT_EQ(rows[1].size(), columns.size());
  auto col = [&](const char* name) {
    return rows[1][std::find(columns.begin(), columns.end(), name) - columns.begin()];
  };
  EXPECT_EQ(col("reason"), full_row().reason);
  EXPECT_EQ(col("status"), "incorrect");
  EXPECT_EQ(col("bm"), "16");
  EXPECT_EQ(col("has_sink"), "1");
  EXPECT_EQ(col("median_us"), "12.5");
  EXPECT_EQ(col("lengths"), "ragged:1,777,300");
}

}  // namespace
// The field table writes back exactly what the H200 runs wrote: every committed report's rows,
// read and written again, equal the file's rows, but for fields added since (plan_us).
TEST(Report, RowsRoundTripTheCommittedReportsExactly) {
  for (const char* name :
       {"results/h200_2026-11-29_ragged_ours.json", "results/h200_2026-11-29_serving2_ours.json",
        "results/h200_default.json"}) {
    const std::string path = std::string(MHA_SOURCE_DIR) + "/" + name;
    const nlohmann::json file = read_json_file(path, "a report");
    const Report report = read_report_json(path);
    ASSERT_EQ(report.rows.size(), file["rows"].size()) << name;
    for (size_t i = 0; i < report.rows.size(); ++i) {
      nlohmann::json written = to_json_value(report.rows[i]);
      for (const char* added : {"plan_us", "split", "floor_us", "time_over_floor"})
        if (!file["rows"][i].contains(added)) written.erase(added);
      for (const char* object : {"traits", "problem"})
        for (const char* added : {"kv_dtype", "kv_scale", "soft_cap"})
          if (!file["rows"][i][object].contains(added)) written[object].erase(added);
      for (const char* added : {"q1_us", "q3_us"})
        if (!file["rows"][i]["time"].contains(added)) written["time"].erase(added);
      ASSERT_EQ(written, file["rows"][i]) << name << " rows[" << i << "]";
    }
  }
}

}  // namespace mha
