#include "agent/sysfs.h"

#include "agent/testdata/testdata_path.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

TEST(SysfsTest, ListsNaturallyAndReadsTrimmed) {
  Sysfs sys(TestdataPath("sysfs_amd"));
  EXPECT_EQ(sys.List("class/kfd/kfd/topology/nodes"),
            (std::vector<std::string>{"0", "1", "2", "10"}));
  EXPECT_EQ(*sys.Read("class/kfd/kfd/topology/nodes/1/name"), "gfx90a");
  EXPECT_EQ(*sys.ReadInt("class/drm/renderD128/device/gpu_busy_percent"), 37);
  EXPECT_TRUE(sys.List("class/nothing").empty());
  EXPECT_EQ(sys.Read("class/nothing").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SysfsTest, ReadsProperties) {
  Sysfs sys(TestdataPath("sysfs_amd"));
  auto props = sys.ReadProperties("class/kfd/kfd/topology/nodes/2/properties");
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->at("gfx_target_version"), 90402);
  EXPECT_EQ(props->at("simd_count"), 1216);
}

TEST(ParseSysfsIntTest, DecimalAndHex) {
  EXPECT_EQ(*ParseSysfsInt("42\n"), 42);
  EXPECT_EQ(*ParseSysfsInt("0x8086"), 0x8086);
  EXPECT_FALSE(ParseSysfsInt("").ok());
  EXPECT_FALSE(ParseSysfsInt("12abc").ok());
}

}  // namespace
}  // namespace ctxsel::agent
