#include "launch/launch_env.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::launch {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::Pair;

v1::PlacementChoice Gpu(const std::string& vendor, int index, int vendor_index,
                        const std::string& uuid = "") {
  v1::PlacementChoice choice;
  choice.set_variant("saxpy_gpu");
  choice.set_node("mixed");
  v1::Device* device = choice.mutable_device();
  device->set_id("mixed/" + std::to_string(index));
  device->set_index(index);
  device->mutable_traits()->add_kind("gpu");
  device->mutable_traits()->add_vendor(vendor);
  device->set_vendor_index(vendor_index);
  device->set_uuid(uuid);
  return choice;
}

// The node's device number used to be the visibility value: on a node with
// an NVIDIA, an Intel and an AMD GPU the Intel one got ZE_AFFINITY_MASK=1.
TEST(LaunchEnvTest, VisibilityUsesTheVendorsOwnNumber) {
  EXPECT_THAT(LaunchEnv(Gpu("intel", 1, 0), "saxpy"),
              Contains(Pair("ZE_AFFINITY_MASK", "0")));
  EXPECT_THAT(LaunchEnv(Gpu("amd", 2, 0), "saxpy"),
              Contains(Pair("ROCR_VISIBLE_DEVICES", "0")));
  LaunchEnvironment nvidia = LaunchEnv(Gpu("nvidia", 0, 0), "saxpy");
  EXPECT_THAT(nvidia, Contains(Pair("CUDA_VISIBLE_DEVICES", "0")));
  EXPECT_THAT(nvidia, Contains(Pair("CUDA_DEVICE_ORDER", "PCI_BUS_ID")));
  EXPECT_THAT(nvidia, Contains(Pair("OMP_DEFAULT_DEVICE", "0")));
}

TEST(LaunchEnvTest, UuidWhereTheRuntimeTakesOne) {
  LaunchEnvironment nvidia =
      LaunchEnv(Gpu("nvidia", 3, 3, "GPU-8c5b4a1e"), "saxpy");
  EXPECT_THAT(nvidia, Contains(Pair("CUDA_VISIBLE_DEVICES", "GPU-8c5b4a1e")));
  EXPECT_THAT(nvidia, Not(Contains(Pair("CUDA_DEVICE_ORDER", "PCI_BUS_ID"))));
  // Level Zero takes indices only.
  EXPECT_THAT(LaunchEnv(Gpu("intel", 1, 1, "GPU-x"), "saxpy"),
              Contains(Pair("ZE_AFFINITY_MASK", "1")));
}

TEST(LaunchEnvTest, HostGetsAffinityAndBaseGetsTheKernel) {
  v1::PlacementChoice host;
  host.set_base(true);
  host.set_node("cpu-1");
  host.mutable_device()->set_id("cpu-1/host");
  host.mutable_device()->set_index(-1);
  host.mutable_device()->set_compute_units(112);
  host.mutable_device()->mutable_traits()->add_kind("host");
  LaunchEnvironment env = LaunchEnv(host, "saxpy", "claim-7");
  EXPECT_THAT(env, Contains(Pair("CTXSEL_VARIANT", "saxpy")));
  EXPECT_THAT(env, Contains(Pair("CTXSEL_CLAIM", "claim-7")));
  EXPECT_THAT(env, Contains(Pair("OMP_NUM_THREADS", "112")));
  EXPECT_THAT(env, Contains(Pair("OMP_PLACES", "cores")));
  EXPECT_THAT(env, Not(Contains(Pair("CUDA_VISIBLE_DEVICES", ::testing::_))));
  EXPECT_THAT(
      env, Not(Contains(Pair("CTXSEL_RUNTIME_ONLY_VARIANTS", ::testing::_))));
}

TEST(LaunchEnvTest, RuntimeOnlyVariantsAboveTheChoice) {
  v1::PlacementChoice choice = Gpu("nvidia", 0, 0);
  choice.add_runtime_only_variants("saxpy_tuned");
  choice.add_runtime_only_variants("saxpy_plan");
  EXPECT_THAT(
      LaunchEnv(choice, "saxpy"),
      Contains(Pair("CTXSEL_RUNTIME_ONLY_VARIANTS", "saxpy_tuned,saxpy_plan")));
}

TEST(LaunchEnvTest, ExportLinesAreShellQuoted) {
  EXPECT_EQ(ExportLines({{"A", "x"}, {"B", "it's"}}),
            "export A='x'\nexport B='it'\\''s'\n");
}

}  // namespace
}  // namespace ctxsel::launch
