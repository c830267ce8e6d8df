// The GPU's streaming-read bandwidth, measured at the start of a sweep: the roofline every row's
// achieved bandwidth is a fraction of.
#pragma once

namespace mha {

// Median GB/s of `repeats` timed reads of a `bytes` buffer (16-byte loads, every SM busy).
double measure_peak_read_gbps(double bytes = 4.0e9, int repeats = 20);

}  // namespace mha
