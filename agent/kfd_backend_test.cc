#include "agent/kfd_backend.h"

#include <filesystem>
#include <fstream>

#include "agent/testdata/testdata_path.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

using Names = std::vector<std::string>;

TEST(GfxNameTest, DecodesTargetVersions) {
  EXPECT_EQ(GfxName(90010), "gfx90a");
  EXPECT_EQ(GfxName(90012), "gfx90c");
  EXPECT_EQ(GfxName(90402), "gfx942");
  EXPECT_EQ(GfxName(100300), "gfx1030");
  EXPECT_EQ(GfxName(110000), "gfx1100");
  EXPECT_EQ(GfxName(80003), "gfx803");
  EXPECT_EQ(GfxName(0), "");
  EXPECT_EQ(GfxName(90016), "");
}

TEST(KfdBackendTest, FindsTheFixtureGpus) {
  auto kfd = MakeKfdBackend(Sysfs(TestdataPath("sysfs_amd")));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = kfd->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 3u);  // node 0 is the CPU
  const DeviceInfo& mi250 = (*gpus)[0];
  EXPECT_EQ(mi250.sycl_architecture, "amd_gpu_gfx90a");
  EXPECT_EQ(mi250.kind, (Names{"gpu", "nohost"}));
  EXPECT_EQ(mi250.arch, (Names{"amd_gpu_gfx90a", "amdgcn"}));
  EXPECT_EQ(mi250.isa, (Names{"gfx90a"}));
  EXPECT_EQ(mi250.vendor, (Names{"amd"}));
  EXPECT_EQ(mi250.compute_units, 110);
  EXPECT_EQ(mi250.memory_bytes, 68702699520);
  EXPECT_DOUBLE_EQ(mi250.utilisation, 0.37);
  // device/ras/umc_err_count has "ue: 2" (gfx_err_count "ue: 0").
  EXPECT_EQ(mi250.health, DeviceHealth::kDegraded);
  EXPECT_EQ(mi250.health_reason, "2 uncorrectable RAS errors (umc)");
  EXPECT_EQ(mi250.attributes.at("pci_location"), "c1:00.0");
  EXPECT_EQ(mi250.pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(mi250.uuid, "GPU-112210f47de98115");
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*gpus)[i].vendor_index, i);
  EXPECT_EQ(mi250.backend, "kfd");
  EXPECT_EQ((*gpus)[1].sycl_architecture, "amd_gpu_gfx942");
  EXPECT_EQ((*gpus)[1].compute_units, 304);
  EXPECT_EQ((*gpus)[2].sycl_architecture, "amd_gpu_gfx1100");
  EXPECT_EQ((*gpus)[2].compute_units, 96);
}

// An MI300X in DPX mode (two KFD nodes at one PCI device, the kernel's
// partition number in location_id's function bits) beside a whole MI250X.
TEST(KfdBackendTest, ComputePartitionsAreDevicesWithTheBoardAsParent) {
  auto kfd = MakeKfdBackend(Sysfs(TestdataPath("sysfs_amd_dpx")));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = kfd->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 4u);  // the board, its 2 partitions, the MI250X
  const DeviceInfo& board = (*gpus)[0];
  EXPECT_EQ(board.sycl_architecture, "amd_gpu_gfx942");
  EXPECT_EQ(board.uuid, "GPU-1234567890abcdef");
  EXPECT_EQ(board.parent, "");
  EXPECT_EQ(board.compute_units, 304);
  EXPECT_EQ(board.memory_bytes, 2 * 103079215104);
  EXPECT_EQ(board.pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(board.attributes.at("compute_partition"), "DPX");
  EXPECT_EQ(board.attributes.at("memory_partition"), "NPS1");
  EXPECT_EQ(board.vendor_index, -1);  // not a ROCm agent in DPX mode
  // The board's RAS counters ("ue: 1") make the board and both partitions
  // degraded, though only the first partition's DRM device has them.
  EXPECT_EQ(board.health, DeviceHealth::kDegraded);
  for (int i = 0; i < 2; ++i) {
    const DeviceInfo& part = (*gpus)[1 + i];
    EXPECT_EQ(part.parent, "GPU-1234567890abcdef") << i;
    EXPECT_EQ(part.uuid, "") << i;  // ROCm numbers partitions instead
    EXPECT_EQ(part.vendor_index, i);
    EXPECT_EQ(part.compute_units, 152);
    EXPECT_EQ(part.memory_bytes, 103079215104);
    EXPECT_EQ(part.pci_bus_id, "0000:c1:00.0");  // not "c1:00.1"
    EXPECT_EQ(part.attributes.at("partition_index"), std::to_string(i));
    EXPECT_EQ(part.attributes.at("compute_partition"), "DPX");
    EXPECT_EQ(part.health, DeviceHealth::kDegraded);
    EXPECT_EQ(part.health_reason, "1 uncorrectable RAS errors (umc)");
  }
  const DeviceInfo& whole = (*gpus)[3];
  EXPECT_EQ(whole.sycl_architecture, "amd_gpu_gfx90a");
  EXPECT_EQ(whole.parent, "");
  EXPECT_EQ(whole.vendor_index, 2);
  EXPECT_EQ(whole.attributes.count("compute_partition"), 0u);
  EXPECT_EQ(whole.health, DeviceHealth::kHealthy);
  // The agent's ids: the partitions name the board's id.
  AssignIds("n", *gpus);
  EXPECT_EQ((*gpus)[1].parent, (*gpus)[0].id);
  EXPECT_EQ((*gpus)[2].parent, (*gpus)[0].id);
  EXPECT_EQ((*gpus)[3].parent, "");
}

TEST(KfdBackendTest, NoDriverIsNotAnError) {
  auto kfd = MakeKfdBackend(Sysfs(TestdataPath("sysfs_intel")));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = kfd->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
}

TEST(KfdBackendTest, MalformedPropertiesAreAnError) {
  std::string root = std::string(std::getenv("TEST_TMPDIR")) + "/bad_kfd";
  std::string node = root + "/sys/class/kfd/kfd/topology/nodes/1";
  std::filesystem::create_directories(node);
  std::ofstream(node + "/properties")
      << "gfx_target_version 90010\nsimd_count\n";
  absl::StatusOr<std::vector<DeviceInfo>> gpus =
      MakeKfdBackend(Sysfs(root))->Discover();
  ASSERT_FALSE(gpus.ok());
  EXPECT_NE(gpus.status().message().find("properties:2:"), std::string::npos)
      << gpus.status();
}

}  // namespace
}  // namespace ctxsel::agent
