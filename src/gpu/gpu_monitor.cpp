// NVML by dlopen: only the four entry points the monitor needs, declared with NVML's C ABI.
#include "gpu_monitor.h"

#include <dlfcn.h>

#include <cstdint>

namespace mha {
namespace {

using NvmlInit = int (*)();
using NvmlHandleByIndex = int (*)(unsigned, void**);
using NvmlClockInfo = int (*)(void*, int, unsigned*);
using NvmlThrottleReasons = int (*)(void*, unsigned long long*);

struct Nvml {
  NvmlHandleByIndex handle_by_index = nullptr;
  NvmlClockInfo clock_info = nullptr;
  NvmlThrottleReasons throttle_reasons = nullptr;
  bool ok = false;
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
    handle_by_index =
        reinterpret_cast<NvmlHandleByIndex>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    clock_info = reinterpret_cast<NvmlClockInfo>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    throttle_reasons =
        reinterpret_cast<NvmlThrottleReasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!throttle_reasons)
      throttle_reasons = reinterpret_cast<NvmlThrottleReasons>(
          dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    ok = init && handle_by_index && clock_info && init() == 0;
  }
};

const Nvml& nvml() {
  static const Nvml instance;
  return instance;
}

constexpr int kNvmlClockSm = 1;
// Reasons that mean the clock was held down by something other than idleness or an
// application-clock setting: SW power cap, HW slowdown, SW/HW thermal, power brake.
constexpr unsigned long long kSlowdownMask = 0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull;

}  // namespace

GpuMonitor::GpuMonitor(int device) {
  // NVML indexes devices in PCI order, which is CUDA's default order too.
  if (nvml().ok && nvml().handle_by_index(static_cast<unsigned>(device), &handle_) != 0)
    handle_ = nullptr;
}

ClockReading GpuMonitor::read() const {
  ClockReading r;
  if (!handle_) return r;
  unsigned mhz = 0;
  if (nvml().clock_info(handle_, kNvmlClockSm, &mhz) == 0) r.sm_clock_mhz = mhz;
  unsigned long long reasons = 0;
  if (nvml().throttle_reasons && nvml().throttle_reasons(handle_, &reasons) == 0)
    r.throttled = (reasons & kSlowdownMask) != 0;
  return r;
}

}  // namespace mha
