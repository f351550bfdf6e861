#include "server/placement/device_class.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server::placement {
namespace {

using ::testing::ElementsAre;

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

// What an answer says of the class is built with it, in its ctxsel.v1
// form (names sorted), so an answer copies it instead of rebuilding it.
TEST(DeviceClassTest, ProtoFormMadeOnceWithTheClass) {
  const DeviceClass c = MakeDeviceClass(
      2, Traits({"nohost", "gpu"}, {"nvptx"}, {"sm_90a", "sm_90"}),
      "nvidia_gpu_sm_90");
  EXPECT_THAT(c.proto.traits().kind(), ElementsAre("gpu", "nohost"));
  EXPECT_THAT(c.proto.traits().isa(), ElementsAre("sm_90", "sm_90a"));
  EXPECT_THAT(c.proto.traits().arch(), ElementsAre("nvptx"));
  EXPECT_EQ(c.proto.sycl_architecture(), "nvidia_gpu_sm_90");
  EXPECT_EQ(c.proto.device_class(), c.name);
  EXPECT_EQ(c.proto.device_class_short_name(), "nvidia_gpu_sm_90");
  // Nothing of a device's own: an answer sets those.
  EXPECT_EQ(c.proto.id(), "");
  EXPECT_EQ(c.proto.memory_bytes(), 0u);
}

// One text form for a layout, made of short names and device numbers only,
// so two processes (whose class ids differ) write the same layout alike;
// before, coverage printed the key "-1:1,0:2,1:2".
TEST(NodeLayoutTextTest, DeviceNumbersWithShortNamesRunsJoined) {
  // Made in the other order, with other ids: the text does not change.
  const DeviceClass gpu = MakeDeviceClass(
      7, Traits({"gpu", "nohost"}, {"nvptx"}, {"sm_90"}), "nvidia_gpu_sm_90");
  const DeviceClass cpu = MakeDeviceClass(
      3, Traits({"cpu", "host"}, {"x86_64"}, {"avx2", "x86_64_v3"}), "x86_64");
  const NodeLayout layout =
      MakeNodeLayout(1, {{1, &gpu}, {-1, &cpu}, {0, &gpu}, {3, &gpu}});
  EXPECT_EQ(layout.text,
            "-1:x86_64_v3/avx2,0-1:nvidia_gpu_sm_90,3:nvidia_gpu_sm_90");
  EXPECT_EQ(NodeLayoutText({{0, &cpu}, {-1, &cpu}}),
            "-1:x86_64_v3/avx2,0:x86_64_v3/avx2");
  EXPECT_EQ(layout.key, "-1:3,0:7,1:7,3:7");
}

}  // namespace
}  // namespace ctxsel::server::placement
