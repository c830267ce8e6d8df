// NVML by dlopen: only the entry points the monitor needs, declared with NVML's C ABI.
#include "gpu/gpu_monitor.h"

#include <dlfcn.h>

#include <cstdint>

#include "gpu/device_info.h"

namespace mha {
namespace {

using NvmlInit = int (*)();
using NvmlClockInfo = int (*)(void*, int, unsigned*);
using NvmlThrottleReasons = int (*)(void*, unsigned long long*);

struct Nvml {
  NvmlLookups lookups;
  NvmlClockInfo clock_info = nullptr;
  NvmlThrottleReasons throttle_reasons = nullptr;
  bool ok = false;
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
    using Lookup = int (*)(const char*, void**);
    lookups.by_uuid = reinterpret_cast<Lookup>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
    lookups.by_pci_bus_id =
        reinterpret_cast<Lookup>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info = reinterpret_cast<NvmlClockInfo>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    throttle_reasons =
        reinterpret_cast<NvmlThrottleReasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!throttle_reasons)
      throttle_reasons = reinterpret_cast<NvmlThrottleReasons>(
          dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    ok = init && clock_info && init() == 0;
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

void* find_nvml_device(const NvmlLookups& nvml, const std::string& uuid,
                       const std::string& pci_bus_id) {
  void* device = nullptr;
  if (nvml.by_uuid && !uuid.empty() && nvml.by_uuid(uuid.c_str(), &device) == 0) return device;
  device = nullptr;
  if (nvml.by_pci_bus_id && !pci_bus_id.empty() &&
      nvml.by_pci_bus_id(pci_bus_id.c_str(), &device) == 0)
    return device;
  return nullptr;
}

GpuMonitor::GpuMonitor(int device) {
  if (!nvml().ok) return;
  const DeviceProps props = device_props(device);
  handle_ = find_nvml_device(nvml().lookups, props.uuid, props.pci_bus_id);
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
