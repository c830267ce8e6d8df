// CSV report: one line per measurement with every tile parameter, the problem shape, time
// statistics, bandwidth, error and status as columns; RFC 4180 quoting.
#pragma once

#include <string>
#include <vector>

#include "common/result_row.h"

namespace mha {

// A field quoted when it holds a comma, a double quote, CR or LF (quotes doubled), else as is.
std::string csv_escape(const std::string& field);
// Escaped fields joined by commas, ending in "\n".
std::string csv_line(const std::vector<std::string>& fields);

// Column names, in order: kernel, dtype, out_dtype, depth, group, kv, mask, sink, bm, bn, bk, wm,
// wn, threads, stages, warp_split_k, smem_bytes, problem, batch, heads, kv_heads, page_size,
// window, chunk, keys, lengths, partitions, status, reason, median_us, min_us, mean_us, stdev_us,
// samples, bytes, gbps, peak_fraction, rel_l2_error, max_abs_error, sm_clock_mhz, throttled,
// device. Booleans are 0/1; doubles in shortest round-trip form.
std::vector<std::string> report_csv_columns();
std::vector<std::string> report_csv_fields(const ResultRow& row);
std::string report_to_csv(const std::vector<ResultRow>& rows);

// Written through a temporary file and a rename; throws UsageError when it cannot be written.
void write_report_csv(const std::string& path, const std::vector<ResultRow>& rows);

}  // namespace mha
