#include "server/fleet/device_filter.h"

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Device MakeDevice(int index, const std::string& kind, const std::string& arch) {
  Device d;
  d.node = "n1";
  d.id = "n1/" + kind + std::to_string(index);
  d.index = index;
  d.traits.kind = {kind};
  d.traits.arch = {arch};
  return d;
}

TEST(DeviceFilterTest, MatchesTheDeviceAndItsNode) {
  const Device cpu = MakeDevice(-1, "cpu", "x86_64");
  const Device gpu = MakeDevice(0, "gpu", "nvptx");
  const std::vector<Device> node = {cpu, gpu};
  absl::StatusOr<DeviceFilter> gpus =
      DeviceFilter::Parse("device={kind(gpu)}", "device_filter");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->Matches(gpu, node));
  EXPECT_FALSE(gpus->Matches(cpu, node));
  // Every device of a node whose device 0 is an NVIDIA GPU.
  absl::StatusOr<DeviceFilter> beside = DeviceFilter::Parse(
      "target_device={device_num(0), arch(nvptx)}", "device_filter");
  ASSERT_TRUE(beside.ok()) << beside.status();
  EXPECT_TRUE(beside->Matches(cpu, node));
  EXPECT_TRUE(beside->Matches(gpu, node));

  std::string reason;
  EXPECT_FALSE(gpus->Matches(cpu.traits, {}, &reason));
  EXPECT_THAT(reason, HasSubstr("device.kind"));
}

TEST(DeviceFilterTest, EmptyMatchesEverything) {
  absl::StatusOr<DeviceFilter> all = DeviceFilter::Parse("", "device_filter");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  EXPECT_EQ(all->text(), "");
  EXPECT_TRUE(all->Matches(MakeDevice(0, "gpu", "nvptx"), {}));
}

TEST(DeviceFilterTest, TextIsCanonical) {
  absl::StatusOr<DeviceFilter> a =
      DeviceFilter::Parse("device={ isa(b, a) }", "device_filter");
  absl::StatusOr<DeviceFilter> b =
      DeviceFilter::Parse("device={isa(a,b)}", "device_filter");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->text(), b->text());
}

// One meaning wherever a filter is read: it depends on the device only, so
// a set or variable that the job would decide is refused, with the field.
TEST(DeviceFilterTest, JobDependentFiltersAreInvalid) {
  for (const char* text : {"user={condition(N > 4)}", "construct={target}",
                           "implementation={vendor(llvm)}",
                           "device={kind(gpu)}, user={condition(1)}",
                           "target_device={device_num(D), kind(gpu)}"}) {
    absl::StatusOr<DeviceFilter> f =
        DeviceFilter::Parse(text, "job.device_filter");
    ASSERT_FALSE(f.ok()) << text;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(f.status().message()),
                StartsWith("job.device_filter: "));
    EXPECT_THAT(std::string(f.status().message()),
                HasSubstr("must not depend on the job"));
    auto bad = GetDetail<google::rpc::BadRequest>(f.status());
    ASSERT_TRUE(bad.has_value()) << text;
    EXPECT_EQ(bad->field_violations(0).field(), "job.device_filter");
    auto info = GetDetail<google::rpc::ErrorInfo>(f.status());
    ASSERT_TRUE(info.has_value()) << text;
    EXPECT_EQ(info->reason(), "SELECTOR_INVALID");
  }
  absl::StatusOr<DeviceFilter> user = DeviceFilter::Parse(
      "device={kind(gpu)}, user={condition(N > 4)}", "device_filter");
  auto info = GetDetail<google::rpc::ErrorInfo>(user.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->metadata().at("column"), "21");  // where `user` starts
}

TEST(DeviceFilterTest, ParseErrorsNameTheFieldWithLineAndColumn) {
  absl::StatusOr<DeviceFilter> f =
      DeviceFilter::Parse("device={kind(gpu)", "device_filter");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              StartsWith("device_filter: 1:"));
  auto info = GetDetail<google::rpc::ErrorInfo>(f.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->metadata().at("line"), "1");
}

TEST(DeviceFilterCacheTest, ParsesOnceUpToCapacity) {
  DeviceFilterCache cache(2);
  absl::StatusOr<DeviceFilter> a = cache.Get("device={kind(gpu)}", "f");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->text(), "device={kind(gpu)}");
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_TRUE(cache.Get("device={kind(gpu)}", "f").ok());
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_TRUE(cache.Get("device={kind(cpu)}", "f").ok());
  ASSERT_TRUE(cache.Get("device={arch(nvptx)}", "f").ok());  // not kept
  EXPECT_EQ(cache.size(), 2u);
}

TEST(DeviceFilterCacheTest, ErrorsAreNotCachedAndNameTheCallersField) {
  DeviceFilterCache cache(4);
  EXPECT_THAT(std::string(cache.Get("user={condition(N>1)}", "device_filter")
                              .status()
                              .message()),
              StartsWith("device_filter: "));
  EXPECT_THAT(
      std::string(cache.Get("user={condition(N>1)}", "job.device_filter")
                      .status()
                      .message()),
      StartsWith("job.device_filter: "));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace ctxsel::server
