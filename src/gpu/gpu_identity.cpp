// Driver release and GPU identities for report metadata (NVML through dlopen, as gpu_monitor.cpp:
// the development machines' CUDA has no nvml.h).
#include "gpu/gpu_identity.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <regex>

namespace mha {

std::string format_gpu_uuid(const unsigned char (&b)[16]) {
  std::string hex;
  for (unsigned char c : b) hex += fmt::format("{:02x}", c);
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20, 12));
}

std::string format_pci_bus_id(int domain, int bus, int device) {
  return fmt::format("{:08X}:{:02X}:{:02X}.0", domain, bus, device);
}

std::string parse_nvidia_driver_version(const std::string& text) {
  // The release follows "Kernel Module" (proprietary) or "Open Kernel Module" (open modules).
  static const std::regex release(R"(Kernel Module(?: for [^ ]+)?\s+([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  if (std::regex_search(text, m, release)) return m[1].str();
  return "";
}

std::string nvidia_driver_version() {
  std::ifstream proc("/proc/driver/nvidia/version");
  if (proc) {
    const std::string text((std::istreambuf_iterator<char>(proc)),
                           std::istreambuf_iterator<char>());
    const std::string v = parse_nvidia_driver_version(text);
    if (!v.empty()) return v;
  }
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "";
  using Init = int (*)();
  using DriverVersion = int (*)(char*, unsigned);
  auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  auto get = reinterpret_cast<DriverVersion>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  char buf[96] = {0};
  if (init && get && init() == 0 && get(buf, sizeof buf) == 0) return buf;
  return "";
}

}  // namespace mha
