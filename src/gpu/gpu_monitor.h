// SM clock and throttling through NVML, loaded at run time (libnvidia-ml.so.1 comes with the
// driver; the development machines have no nvml.h). Without NVML every reading is "unknown".
#pragma once

#include <string>

namespace mha {

struct ClockReading {
  double sm_clock_mhz = 0;  // 0: unknown
  bool throttled = false;   // a power, thermal or clock-slowdown reason was active
};

// NVML's two look-ups that name a GPU the way CUDA does whatever CUDA_VISIBLE_DEVICES remaps:
// its UUID and its PCI bus id. Each returns NVML's status (0: found) and sets *device.
struct NvmlLookups {
  int (*by_uuid)(const char* uuid, void** device) = nullptr;
  int (*by_pci_bus_id)(const char* pci_bus_id, void** device) = nullptr;
};

// The NVML device of the CUDA device whose UUID and PCI bus id are given: by UUID, else by bus
// id, else none (null: the readings stay unknown). Never by index: NVML counts every GPU of the
// host, CUDA only the visible ones, so an index names another GPU under CUDA_VISIBLE_DEVICES.
void* find_nvml_device(const NvmlLookups& nvml, const std::string& uuid,
                       const std::string& pci_bus_id);

class GpuMonitor {
 public:
  explicit GpuMonitor(int device);  // a CUDA device ordinal
  ClockReading read() const;

 private:
  void* handle_ = nullptr;  // nvmlDevice_t
};

}  // namespace mha
