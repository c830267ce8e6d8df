// Host tests for the identities a report records so that a person can match it to a machine
// (src/gpu/gpu_identity.h): UUID and PCI bus id as nvidia-smi prints them, the driver release from
// /proc/driver/nvidia/version, and the new metadata fields read back (and absent in old reports).
#include <gtest/gtest.h>

#include "gpu/gpu_identity.h"
#include "reports/report_json.h"

namespace mha {
namespace {

TEST(GpuIdentity, UuidAndBusIdAsNvidiaSmiPrintsThem) {
  const unsigned char bytes[16] = {0x8f, 0x7c, 0x1a, 0x02, 0xb3, 0x4d, 0x5e, 0x6f,
                                   0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7};
  EXPECT_EQ(format_gpu_uuid(bytes), "GPU-8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7");
  EXPECT_EQ(format_pci_bus_id(0, 0x3b, 0), "00000000:3B:00.0");
  EXPECT_EQ(format_pci_bus_id(1, 0xc1, 0x1f), "00000001:C1:1F.0");
}

TEST(GpuIdentity, DriverReleaseFromProcText) {
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Thu Nov 20 2026\n"
                "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"),
            "580.159");
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release "
                "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n"),
            "570.86.15");
  EXPECT_EQ(parse_nvidia_driver_version(""), "");
  EXPECT_EQ(parse_nvidia_driver_version("GCC version: 12.2.0"), "");
}

TEST(GpuIdentity, MetadataFieldsRoundTripAndOldReportsStillLoad) {
  RunMetadata m;
  m.gpu_name = "NVIDIA H200";
  m.driver_version = "13.0";
  m.nvidia_driver_version = "580.159";
  m.gpu_uuids = "GPU-8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7,GPU-00000000-0000-0000-0000-000000000001";
  m.gpu_pci_bus_ids = "00000000:3B:00.0,00000000:3C:00.0";
  m.wall_time_s = 54.5;
  nlohmann::json j = to_json_value(m);
  const RunMetadata back = metadata_from_json(j, "r.json: metadata");
  EXPECT_EQ(back.nvidia_driver_version, "580.159");
  EXPECT_EQ(back.driver_version, "13.0");  // the old field keeps its meaning
  EXPECT_EQ(back.gpu_uuids, m.gpu_uuids);
  EXPECT_EQ(back.gpu_pci_bus_ids, m.gpu_pci_bus_ids);
  EXPECT_DOUBLE_EQ(back.wall_time_s, 54.5);
  for (const char* key : {"nvidia_driver_version", "gpu_uuids", "gpu_pci_bus_ids", "wall_time_s"})
    j.erase(key);
  const RunMetadata old = metadata_from_json(j, "old.json: metadata");
  EXPECT_EQ(old.nvidia_driver_version, "");
  EXPECT_DOUBLE_EQ(old.wall_time_s, 0);
}

}  // namespace
}  // namespace mha
