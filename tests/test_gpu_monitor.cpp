// Which GPU the clock readings come from (src/gpu/gpu_monitor.h): NVML's device of the CUDA
// device's UUID, else of its PCI bus id, else none; never an index, which under
// CUDA_VISIBLE_DEVICES names another GPU of the host.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "gpu/gpu_monitor.h"

namespace mha {
namespace {

// A host of two GPUs as NVML sees them; the process sees only the second (CUDA device 0).
int g_first, g_second;
const char* const kFirstUuid = "GPU-11111111-1111-1111-1111-111111111111";
const char* const kSecondUuid = "GPU-22222222-2222-2222-2222-222222222222";

int by_uuid(const char* uuid, void** device) {
  if (std::strcmp(uuid, kFirstUuid) == 0) return *device = &g_first, 0;
  if (std::strcmp(uuid, kSecondUuid) == 0) return *device = &g_second, 0;
  return 13;  // NVML_ERROR_NOT_FOUND
}

int by_bus(const char* bus, void** device) {
  if (std::strcmp(bus, "00000000:3B:00.0") == 0) return *device = &g_first, 0;
  if (std::strcmp(bus, "00000000:86:00.0") == 0) return *device = &g_second, 0;
  return 13;
}

TEST(GpuMonitor, FindsTheVisibleGpuByUuidThenBusId) {
  const NvmlLookups nvml{by_uuid, by_bus};
  EXPECT_EQ(find_nvml_device(nvml, kSecondUuid, "00000000:3B:00.0"), &g_second);  // UUID first
  EXPECT_EQ(find_nvml_device(nvml, "GPU-unknown", "00000000:86:00.0"), &g_second);
  EXPECT_EQ(find_nvml_device(nvml, "", "00000000:86:00.0"), &g_second);
  EXPECT_EQ(find_nvml_device(nvml, "GPU-unknown", "00000000:99:00.0"), nullptr);
  EXPECT_EQ(find_nvml_device(NvmlLookups{nullptr, by_bus}, kSecondUuid, "00000000:86:00.0"),
            &g_second);
  EXPECT_EQ(find_nvml_device(NvmlLookups{}, kSecondUuid, "00000000:86:00.0"), nullptr);
}

}  // namespace
}  // namespace mha
