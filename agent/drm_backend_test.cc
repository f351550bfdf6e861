#include "agent/drm_backend.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "agent/testdata/testdata_path.h"
#include "devices/arch_traits.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

using Names = std::vector<std::string>;

TEST(LookupIntelGpuTest, KnownAndUnknownIds) {
  EXPECT_EQ(LookupIntelGpu(0x0BD5).sycl_architecture, "intel_gpu_pvc");
  EXPECT_EQ(LookupIntelGpu(0x56A0).sycl_architecture, "intel_gpu_acm_g10");
  EXPECT_EQ(LookupIntelGpu(0x9A49).sycl_architecture, "intel_gpu_tgllp");
  EXPECT_EQ(LookupIntelGpu(0x4905).sycl_architecture, "intel_gpu_dg1");
  EXPECT_EQ(LookupIntelGpu(0x9999).sycl_architecture, "");
}

TEST(LookupIntelGpuTest, EveryTableRowIsACatalogArchitecture) {
  std::set<uint32_t> seen;
  for (uint32_t id : KnownIntelGpuPciIds()) {
    EXPECT_TRUE(seen.insert(id).second) << "duplicate PCI id " << id;
    DeviceInfo d;
    d.sycl_architecture = LookupIntelGpu(id).sycl_architecture;
    EXPECT_TRUE(ApplyArchTraits(d).ok()) << d.sycl_architecture;
  }
}

TEST(DrmBackendTest, FindsTheFixtureIntelGpus) {
  auto drm = MakeDrmBackend(Sysfs(TestdataPath("sysfs_intel")));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = drm->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  // card0 (PVC), card1 (Flex 170), card10 (unknown Intel id); not the NVIDIA
  // card2, the connector card0-DP-1 or the render node renderD128.
  ASSERT_EQ(gpus->size(), 3u);
  const DeviceInfo& pvc = (*gpus)[0];
  EXPECT_EQ(pvc.sycl_architecture, "intel_gpu_pvc");
  EXPECT_EQ(pvc.kind, (Names{"gpu", "nohost"}));
  EXPECT_EQ(pvc.isa, (Names{"pvc"}));
  EXPECT_EQ(pvc.vendor, (Names{"intel"}));
  EXPECT_EQ(pvc.attributes.at("pci_location"), "0000:29:00.0");
  EXPECT_EQ(pvc.attributes.at("pci_device_id"), "0x0bd5");
  EXPECT_EQ(pvc.memory_bytes, 68719476736);
  EXPECT_EQ(pvc.name, "Intel Data Center GPU Max 1550");
  EXPECT_EQ((*gpus)[1].sycl_architecture, "intel_gpu_acm_g10");
  EXPECT_EQ((*gpus)[2].sycl_architecture, "");
  EXPECT_EQ((*gpus)[2].vendor, (Names{"intel"}));
  EXPECT_EQ((*gpus)[2].attributes.at("drm_card"), "card10");
}

// The fixture's sysfs: card0 with zero AER counts and i915's "No error
// state collected"; card1 with a fatal and two non-fatal AER errors; card10
// with a captured i915 error state and a devcoredump.
TEST(DrmBackendTest, HealthFromAerErrorStateAndDevcoredump) {
  auto drm = MakeDrmBackend(Sysfs(TestdataPath("sysfs_intel")));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = drm->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0].health, DeviceHealth::kHealthy);
  EXPECT_EQ((*gpus)[0].health_reason, "");
  EXPECT_EQ((*gpus)[1].health, DeviceHealth::kUnhealthy);  // the worst wins
  EXPECT_EQ((*gpus)[1].health_reason, "1 fatal PCIe errors (AER)");
  EXPECT_EQ((*gpus)[2].health, DeviceHealth::kDegraded);
  EXPECT_EQ((*gpus)[2].health_reason,
            "the driver dumped a GPU crash state (devcoredump)");
}

// Health recovers when the kernel's evidence goes: a devcoredump expires,
// an operator clears i915's error state.
TEST(DrmBackendTest, HealthRecoversWhenTheEvidenceGoes) {
  const std::string root =
      std::string(std::getenv("TEST_TMPDIR")) + "/intel_recovers";
  const std::string card = root + "/sys/class/drm/card0";
  std::filesystem::create_directories(card + "/device/devcoredump");
  std::ofstream(card + "/device/vendor") << "0x8086\n";
  std::ofstream(card + "/device/device") << "0x0bd5\n";
  std::ofstream(card + "/error") << "i915 GPU error state\n";
  auto drm = MakeDrmBackend(Sysfs(root));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = drm->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].health, DeviceHealth::kDegraded);
  std::filesystem::remove_all(card + "/device/devcoredump");
  gpus = drm->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].health_reason,
            "i915 captured a GPU error state (a hang or reset)");
  std::ofstream(card + "/error") << "No error state collected\n";
  gpus = drm->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].health, DeviceHealth::kHealthy);
}

TEST(DrmBackendTest, NoDrmIsNotAnError) {
  auto drm = MakeDrmBackend(Sysfs(TestdataPath("sysfs_amd")));
  absl::StatusOr<std::vector<DeviceInfo>> gpus = drm->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
}

}  // namespace
}  // namespace ctxsel::agent
