#include "selector/sycl/device_normalize.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::sycl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::UnorderedElementsAre;

TEST(DeviceNormalizeTest, ArchitectureAloneGivesEveryTrait) {
  selector::DeviceTraits traits;
  ASSERT_TRUE(NormalizeDeviceTraits("nvidia_gpu_sm_90", traits).ok());
  EXPECT_THAT(traits.kind, UnorderedElementsAre("gpu", "nohost"));
  EXPECT_THAT(traits.vendor, UnorderedElementsAre("nvidia"));
  EXPECT_THAT(traits.isa, IsSupersetOf({"sm_90"}));
  EXPECT_THAT(traits.arch, IsSupersetOf({"nvptx", "nvidia_gpu_sm_90"}));
}

TEST(DeviceNormalizeTest, NamesAreLowerCasedAndKindsFromTheVocabulary) {
  selector::DeviceTraits gpu;
  gpu.kind = {"GPU"};
  gpu.vendor = {"ACME"};
  ASSERT_TRUE(NormalizeDeviceTraits("", gpu).ok());
  EXPECT_THAT(gpu.kind, UnorderedElementsAre("gpu"));
  EXPECT_THAT(gpu.vendor, UnorderedElementsAre("acme"));

  selector::DeviceTraits tpu;
  tpu.kind = {"tpu"};
  absl::Status s = NormalizeDeviceTraits("", tpu);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("traits.kind: 'tpu' is not a device kind"));

  selector::DeviceTraits nothing;
  nothing.vendor = {"nvidia"};
  EXPECT_THAT(NormalizeDeviceTraits("", nothing).message(),
              HasSubstr("traits.kind: empty and no sycl_architecture"));

  selector::DeviceTraits unknown;
  EXPECT_THAT(NormalizeDeviceTraits("nvidia_gpu_sm_91", unknown).message(),
              HasSubstr("sycl_architecture: unknown SYCL architecture"));
}

TEST(DeviceNormalizeTest, EachVendorCountsItsOwnDevices) {
  EXPECT_THAT(VendorIndices({{"", -1},
                             {"nvidia", -1},
                             {"intel", -1},
                             {"amd", -1},
                             {"nvidia", -1}}),
              ElementsAre(-1, 0, 0, 0, 1));
  // Given numbers are kept and skipped.
  EXPECT_THAT(VendorIndices({{"nvidia", -1}, {"nvidia", 0}, {"nvidia", -1}}),
              ElementsAre(1, 0, 2));
}

TEST(DeviceNormalizeTest, DeviceIdsNumberEachKindAndSkipGivenIds) {
  EXPECT_EQ(IdKind(std::vector<std::string>{"host", "cpu"}), "cpu");
  EXPECT_EQ(IdKind(selector::NameSet{"nohost", "gpu"}), "gpu");
  EXPECT_EQ(IdKind(std::vector<std::string>{"nohost"}), "device");
  EXPECT_THAT(DeviceIds("n1", {{"cpu", ""}, {"gpu", ""}, {"gpu", "n1/gpu1"},
                               {"gpu", ""}, {"fpga", ""}}),
              ElementsAre("n1/cpu0", "n1/gpu0", "n1/gpu1", "n1/gpu2",
                          "n1/fpga0"));
}

TEST(DeviceNormalizeTest, RuntimeVendor) {
  selector::DeviceTraits traits;
  EXPECT_EQ(RuntimeVendor(traits), "");
  traits.vendor = {"nvidia"};
  EXPECT_EQ(RuntimeVendor(traits), "nvidia");
}

}  // namespace
}  // namespace ctxsel::sycl
