// The GPU a run uses: presence check (exit 3 without one), properties for the report metadata.
#pragma once

#include <string>

#include "common/result_row.h"

namespace mha {

// Selects `device`; throws CudaError with a plain message when there is no CUDA device.
void require_device(int device);

struct DeviceProps {
  std::string name;
  int sm_count = 0;
  int l2_bytes = 0;
  double sm_clock_max_mhz = 0;
  double mem_clock_max_mhz = 0;
  std::string driver_version;
  std::string runtime_version;
  std::string uuid;        // as nvidia-smi -L prints it
  std::string pci_bus_id;  // as nvidia-smi prints it
};
DeviceProps device_props(int device);

// Fills the GPU fields of the metadata.
void describe_device(int device, RunMetadata& meta);

}  // namespace mha
