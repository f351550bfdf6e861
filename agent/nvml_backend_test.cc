#include "agent/nvml_backend.h"

#include <cstdlib>

#include "agent/testdata/testdata_path.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

using Names = std::vector<std::string>;

TEST(NvmlBackendTest, MissingLibraryFindsNothing) {
  auto nvml = MakeNvmlBackend("libnvidia-ml-does-not-exist.so.1");
  absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
}

TEST(NvmlBackendTest, DescribesGpusThroughTheLoadedLibrary) {
  unsetenv("FAKE_NVML_GPUS");
  auto nvml = MakeNvmlBackend(TestdataPath("libfake_nvml.so"));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 3u);
  const DeviceInfo& h100 = (*gpus)[0];
  EXPECT_EQ(h100.sycl_architecture, "nvidia_gpu_sm_90");
  EXPECT_EQ(h100.kind, (Names{"gpu", "nohost"}));
  EXPECT_EQ(h100.arch, (Names{"nvidia_gpu_sm_90", "nvidia_gpu_sm_90a", "nvptx",
                              "nvptx64"}));
  EXPECT_EQ(h100.isa, (Names{"sm_90", "sm_90a"}));
  EXPECT_EQ(h100.vendor, (Names{"nvidia"}));
  EXPECT_EQ(h100.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.memory_bytes, 85520809984);
  EXPECT_DOUBLE_EQ(h100.utilisation, 0.75);
  EXPECT_EQ(h100.attributes.at("uuid"), "GPU-0000");
  EXPECT_EQ(h100.uuid, "GPU-0000");
  // NVML's "00000000:17:00.0" in the API's form.
  EXPECT_EQ(h100.pci_bus_id, "0000:17:00.0");
  EXPECT_EQ((*gpus)[1].pci_bus_id, "0000:2a:00.0");
  EXPECT_EQ((*gpus)[2].pci_bus_id, "0001:c3:00.0");
  // nvmlDeviceGetAttributes_v2 answers only for MIG devices: the SMs come
  // from nvmlDeviceGetNumGpuCores over the cores per SM of each capability.
  EXPECT_EQ(h100.compute_units, 132);        // 16896 cores, 128 per SM (9.0)
  EXPECT_EQ((*gpus)[1].compute_units, 108);  // 6912 cores, 64 per SM (8.0)
  EXPECT_EQ((*gpus)[2].compute_units, 148);  // 18944 cores, 128 per SM (10.0)
  EXPECT_EQ((*gpus)[1].sycl_architecture, "nvidia_gpu_sm_80");
  // Compute capability 10.0 is not in the SYCL catalog: still a GPU.
  const DeviceInfo& b200 = (*gpus)[2];
  EXPECT_EQ(b200.sycl_architecture, "");
  EXPECT_EQ(b200.kind, (Names{"gpu", "nohost"}));
  EXPECT_EQ(b200.isa, (Names{"sm_100"}));
  EXPECT_EQ(b200.vendor, (Names{"nvidia"}));
}

// A driver without nvmlDeviceGetNumGpuCores: the GPUs are still found, with
// no SM count.
TEST(NvmlBackendTest, DriverWithoutGpuCoresGivesNoSmCount) {
  unsetenv("FAKE_NVML_GPUS");
  auto nvml = MakeNvmlBackend(TestdataPath("libfake_nvml_no_gpu_cores.so"));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[0].memory_bytes, 85520809984);
  for (const DeviceInfo& gpu : *gpus) EXPECT_EQ(gpu.compute_units, 0);
}

TEST(NvmlBackendTest, SeesAGpuDisappear) {
  auto nvml = MakeNvmlBackend(TestdataPath("libfake_nvml.so"));
  setenv("FAKE_NVML_GPUS", "1", 1);
  absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
  unsetenv("FAKE_NVML_GPUS");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ(gpus->size(), 1u);
}

}  // namespace
}  // namespace ctxsel::agent
