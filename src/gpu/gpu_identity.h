// What lets a person match a report to the machine that measured it: the NVIDIA driver release
// (580.159, not only the CUDA version the driver supports), and each GPU's UUID and PCI bus id
// written as `nvidia-smi -L` and `nvidia-smi --query-gpu=pci.bus_id` print them.
#pragma once

#include <string>

namespace mha {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from cudaDeviceProp::uuid's 16 bytes.
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);
// "00000000:3B:00.0" from cudaDeviceProp's pciDomainID, pciBusID and pciDeviceID.
std::string format_pci_bus_id(int domain, int bus, int device);

// The release in /proc/driver/nvidia/version's text ("NVRM version: NVIDIA UNIX x86_64 Kernel
// Module  580.159  ..." -> "580.159"); "" when the text has none.
std::string parse_nvidia_driver_version(const std::string& proc_text);
// The driver release of this machine: /proc/driver/nvidia/version, else NVML; "" when neither
// is readable.
std::string nvidia_driver_version();

}  // namespace mha
