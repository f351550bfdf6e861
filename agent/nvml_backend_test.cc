#include "agent/nvml_backend.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
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

// FAKE_NVML_STATE (testdata/fake_nvml.cc) for one test; unset after it.
class NvmlStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FAKE_NVML_GPUS");
    path_ = std::string(std::getenv("TEST_TMPDIR")) + "/nvml_state";
    Write("");
    setenv("FAKE_NVML_STATE", path_.c_str(), 1);
  }
  void TearDown() override { unsetenv("FAKE_NVML_STATE"); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  std::string path_;
};

TEST_F(NvmlStateTest, MigInstancesAreDevicesWithTheirGpuAsParent) {
  Write("mig 0 2\n");
  auto nvml = MakeNvmlBackend(TestdataPath("libfake_nvml.so"));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 5u);
  const DeviceInfo& h100 = (*gpus)[0];
  EXPECT_EQ(h100.attributes.at("mig_mode"), "enabled");
  EXPECT_EQ(h100.parent, "");
  for (int i : {1, 2}) {
    const DeviceInfo& mig = (*gpus)[i];
    EXPECT_EQ(mig.parent, "GPU-0000");  // AssignIds makes it the GPU's id
    EXPECT_EQ(mig.uuid, absl::StrCat("MIG-0000-000", i - 1));
    EXPECT_EQ(mig.memory_bytes, int64_t{10} << 30);
    EXPECT_EQ(mig.compute_units, 16);
    EXPECT_EQ(mig.sycl_architecture, "nvidia_gpu_sm_90");
    EXPECT_EQ(mig.vendor_index, 0);
    EXPECT_EQ(mig.name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb");
  }
  // The A100 answers no MIG mode (NOT_SUPPORTED here): no attribute.
  EXPECT_EQ((*gpus)[3].uuid, "GPU-1111");
  EXPECT_EQ((*gpus)[3].attributes.count("mig_mode"), 0u);
  // MIG mode off again: the instances are gone.
  Write("mig 0 0\n");
  gpus = nvml->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0].attributes.at("mig_mode"), "disabled");
}

TEST_F(NvmlStateTest, HealthFromXidsRowsPagesAndEcc) {
  absl::Time now = absl::FromUnixSeconds(1700000000);
  NvmlOptions options;
  options.library = TestdataPath("libfake_nvml.so");
  options.xid_hold = absl::Minutes(10);
  options.now = [&now] { return now; };
  auto nvml = MakeNvmlBackend(options);
  auto health = [&](size_t i) {
    absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
    EXPECT_TRUE(gpus.ok()) << gpus.status();
    if (!gpus.ok() || gpus->size() <= i) return std::string("none");
    return absl::StrCat(DeviceHealthName((*gpus)[i].health), ": ",
                        (*gpus)[i].health_reason);
  };
  EXPECT_EQ(health(1), "healthy: ");
  // A critical Xid: unhealthy for the hold; an application's (31) is not.
  Write("xid 1 79\nxid 0 31\n");
  EXPECT_EQ(health(1), "unhealthy: Xid 79 at 22:13:20 UTC");
  EXPECT_EQ(health(0), "healthy: ");
  now += absl::Minutes(9);
  EXPECT_EQ(health(1), "unhealthy: Xid 79 at 22:13:20 UTC");
  now += absl::Minutes(2);
  EXPECT_EQ(health(1), "healthy: ");
  Write("xid 1 79\nxid 0 31\nretired_pending 1\n");
  EXPECT_EQ(health(1), "degraded: retired pages pending a GPU reset");
  Write("ecc 2 4\n");
  EXPECT_EQ(health(2), "degraded: 4 volatile uncorrected ECC errors");
  Write("ecc 2 4\nremap_failure 2\n");
  EXPECT_EQ(health(2), "unhealthy: row remapping failed");
  Write("remap_pending 2\n");
  EXPECT_EQ(health(2), "degraded: row remapping pending a GPU reset");
  Write("");
  EXPECT_EQ(health(2), "healthy: ");
}

// A driver without the MIG and health calls: GPUs as before, healthy.
TEST_F(NvmlStateTest, DriverWithoutMigOrHealthCallsStillWorks) {
  Write("mig 0 2\necc 0 5\n");
  auto nvml = MakeNvmlBackend(TestdataPath("libfake_nvml_no_mig.so"));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 3u);
  for (const DeviceInfo& gpu : *gpus) {
    EXPECT_EQ(gpu.health, DeviceHealth::kHealthy);
    EXPECT_EQ(gpu.attributes.count("mig_mode"), 0u);
  }
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
