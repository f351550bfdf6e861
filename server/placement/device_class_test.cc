#include "server/placement/device_class.h"

#include "gtest/gtest.h"

namespace ctxsel::server::placement {
namespace {

selector::DeviceTraits Traits(selector::NameSet kind, selector::NameSet arch,
                              selector::NameSet isa) {
  selector::DeviceTraits t;
  t.kind = std::move(kind);
  t.arch = std::move(arch);
  t.isa = std::move(isa);
  return t;
}

TEST(DeviceClassShortNameTest, AcceleratorsByTheirSyclArchitecture) {
  EXPECT_EQ(DeviceClassShortName(
                Traits({"gpu", "nohost"}, {"nvptx"}, {"sm_90", "sm_90a"}),
                "nvidia_gpu_sm_90"),
            "nvidia_gpu_sm_90");
  EXPECT_EQ(
      DeviceClassShortName(Traits({"gpu", "nohost"}, {"my_accel"}, {}), ""),
      "gpu/my_accel");
}

TEST(DeviceClassShortNameTest, CpusByLevelAndWidestVectorUnit) {
  EXPECT_EQ(DeviceClassShortName(
                Traits({"cpu", "host"}, {"x86_64"},
                       {"avx2", "avx512f", "x86_64_v3", "x86_64_v4"}),
                "x86_64"),
            "x86_64_v4/avx512");
  EXPECT_EQ(DeviceClassShortName(
                Traits({"cpu", "host"}, {"aarch64"}, {"neon", "sve"}), ""),
            "aarch64/sve");
  EXPECT_EQ(DeviceClassShortName(Traits({"cpu", "host"}, {}, {}), ""), "cpu");
}

TEST(DeviceClassShortNameTest, MadeOnceWithTheClass) {
  const DeviceClass c =
      MakeDeviceClass(1, Traits({"cpu", "host"}, {"x86_64"}, {"avx2"}), "");
  EXPECT_EQ(c.short_name, "x86_64/avx2");
  EXPECT_GT(c.name.size(), c.short_name.size());
}

}  // namespace
}  // namespace ctxsel::server::placement
