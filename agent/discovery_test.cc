#include "agent/discovery.h"

#include <fstream>

#include "agent/testdata/testdata_path.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Discovery Make(DiscoveryOptions options) {
  auto backends = MakeBackends(options);
  EXPECT_TRUE(backends.ok()) << backends.status();
  return Discovery("n7", *std::move(backends));
}

TEST(DiscoveryTest, CombinesBackendsInOrderWithIds) {
  DiscoveryOptions options;
  options.backends = {"cpu", "kfd", "drm"};
  options.sysfs_root = TestdataPath("sysfs_amd");
  options.devices_file =
      WriteFile("combined.json",
                R"({"devices": [{"sycl_architecture": "intel_gpu_pvc"}]})");
  Discovery::Result found = Make(options).Run();
  EXPECT_TRUE(found.errors.empty());
  std::vector<std::string> ids;
  for (const DeviceInfo& d : found.devices)
    ids.push_back(d.id + "=" + d.sycl_architecture);
#if defined(__x86_64__)
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "n7/cpu0=x86_64", "n7/gpu0=amd_gpu_gfx90a",
                     "n7/gpu1=amd_gpu_gfx942", "n7/gpu2=amd_gpu_gfx1100",
                     "n7/gpu3=intel_gpu_pvc"}));
  EXPECT_EQ(found.devices[0].index, -1);
  EXPECT_EQ(found.devices[4].index, 3);
#endif
}

TEST(DiscoveryTest, UnknownBackendIsAnError) {
  DiscoveryOptions options;
  options.backends = {"cpu", "cuda"};
  auto backends = MakeBackends(options);
  ASSERT_FALSE(backends.ok());
  EXPECT_NE(backends.status().message().find("unknown backend 'cuda'"),
            std::string::npos);
}

TEST(DiscoveryTest, FailingBackendKeepsItsLastDevices) {
  DiscoveryOptions options;
  options.backends = {};
  std::string path =
      WriteFile("flaky.json", R"([{"sycl_architecture": "nvidia_gpu_sm_90"}])");
  options.devices_file = path;
  Discovery discovery = Make(options);
  Discovery::Result first = discovery.Run();
  ASSERT_EQ(first.devices.size(), 1u);
  std::ofstream(path) << "[{";  // half-written
  Discovery::Result second = discovery.Run();
  ASSERT_EQ(second.errors.size(), 1u);
  EXPECT_NE(second.errors[0].message().find("flaky.json"), std::string::npos);
  EXPECT_TRUE(SameDeviceSet(first.devices, second.devices));
  std::ofstream(path) << "[]";  // the GPU is gone
  EXPECT_TRUE(discovery.Run().devices.empty());
}

TEST(DiscoveryTest, MissingDevicesFileIsReported) {
  DiscoveryOptions options;
  options.backends = {};
  options.devices_file = "/nonexistent/devices.json";
  Discovery::Result found = Make(options).Run();
  ASSERT_EQ(found.errors.size(), 1u);
  EXPECT_EQ(found.errors[0].code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ctxsel::agent
