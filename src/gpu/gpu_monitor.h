// SM clock and throttling through NVML, loaded at run time (libnvidia-ml.so.1 comes with the
// driver; the development machines have no nvml.h). Without NVML every reading is "unknown".
#pragma once

namespace mha {

struct ClockReading {
  double sm_clock_mhz = 0;  // 0: unknown
  bool throttled = false;   // a power, thermal or clock-slowdown reason was active
};

class GpuMonitor {
 public:
  explicit GpuMonitor(int device);
  ClockReading read() const;

 private:
  void* handle_ = nullptr;  // nvmlDevice_t
};

}  // namespace mha
