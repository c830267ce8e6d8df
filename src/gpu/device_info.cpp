// Device discovery and properties.
#include "gpu/device_info.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include "common/errors.h"
#include "gpu/gpu_identity.h"

namespace mha {

void require_device(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw CudaError(
        fmt::format("no CUDA device available ({}); verify, sweep and phases need an NVIDIA GPU",
                    err == cudaSuccess ? "0 devices" : cudaGetErrorString(err)),
        err == cudaSuccess ? cudaErrorNoDevice : err);
  }
  if (device < 0 || device >= count)
    throw UsageError(fmt::format("--device {}: this machine has {} CUDA device(s)", device, count));
  MHA_CUDA_CHECK(cudaSetDevice(device));
}

static std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

DeviceProps device_props(int device) {
  cudaDeviceProp prop{};
  MHA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceProps d;
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  int clock_khz = 0, mem_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
  d.sm_clock_max_mhz = clock_khz / 1000.0;
  d.mem_clock_max_mhz = mem_khz / 1000.0;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  d.driver_version = version_text(driver);
  d.runtime_version = version_text(runtime);
  unsigned char uuid[16];
  std::copy(prop.uuid.bytes, prop.uuid.bytes + 16, uuid);
  d.uuid = format_gpu_uuid(uuid);
  d.pci_bus_id = format_pci_bus_id(prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  return d;
}

void describe_device(int device, RunMetadata& meta) {
  const DeviceProps d = device_props(device);
  meta.gpu_name = d.name;
  meta.sm_count = d.sm_count;
  meta.l2_bytes = d.l2_bytes;
  meta.sm_clock_max_mhz = d.sm_clock_max_mhz;
  meta.mem_clock_max_mhz = d.mem_clock_max_mhz;
  meta.driver_version = d.driver_version;
  meta.cuda_version = d.runtime_version;
  meta.nvidia_driver_version = nvidia_driver_version();
  meta.gpu_uuids = d.uuid;
  meta.gpu_pci_bus_ids = d.pci_bus_id;
}

}  // namespace mha
