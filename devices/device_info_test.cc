#include "devices/device_info.h"

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

DeviceInfo Make(std::vector<std::string> kind, std::string id = "") {
  DeviceInfo d;
  d.kind = std::move(kind);
  d.id = std::move(id);
  return d;
}

TEST(AssignIdsTest, NumbersPerKindAndHostIsMinusOne) {
  std::vector<DeviceInfo> devices = {
      Make({"cpu", "host"}), Make({"gpu", "nohost"}), Make({"gpu", "nohost"}),
      Make({"fpga", "nohost"})};
  AssignIds("n1", devices);
  EXPECT_EQ(devices[0].id, "n1/cpu0");
  EXPECT_EQ(devices[0].index, -1);
  EXPECT_EQ(devices[1].id, "n1/gpu0");
  EXPECT_EQ(devices[1].index, 0);
  EXPECT_EQ(devices[2].id, "n1/gpu1");
  EXPECT_EQ(devices[2].index, 1);
  EXPECT_EQ(devices[3].id, "n1/fpga0");
  EXPECT_EQ(devices[3].index, 2);
  for (const DeviceInfo& d : devices) EXPECT_EQ(d.node, "n1");
}

TEST(AssignIdsTest, KeepsGivenIdsAndAvoidsThem) {
  std::vector<DeviceInfo> devices = {Make({"gpu"}), Make({"gpu"}, "n1/gpu0")};
  AssignIds("n1", devices);
  EXPECT_EQ(devices[0].id, "n1/gpu1");
  EXPECT_EQ(devices[1].id, "n1/gpu0");
}

// On a node with one NVIDIA, one Intel and one AMD GPU, each vendor's
// runtime calls its GPU 0 (they used to get 0, 1, 2 from the node's
// numbering).
TEST(AssignIdsTest, EachVendorNumbersItsOwnDevices) {
  std::vector<DeviceInfo> devices = {
      Make({"cpu", "host"}), Make({"gpu", "nohost"}), Make({"gpu", "nohost"}),
      Make({"gpu", "nohost"}), Make({"gpu", "nohost"})};
  devices[0].vendor = {"intel"};
  devices[1].vendor = {"nvidia"};
  devices[2].vendor = {"intel"};
  devices[3].vendor = {"amd"};
  devices[4].vendor = {"nvidia"};
  devices[4].vendor_index = 0;  // as NVML numbered it
  AssignIds("n1", devices);
  EXPECT_EQ(devices[0].vendor_index, -1);
  EXPECT_EQ(devices[1].vendor_index, 1);
  EXPECT_EQ(devices[2].vendor_index, 0);
  EXPECT_EQ(devices[3].vendor_index, 0);
  EXPECT_EQ(devices[4].vendor_index, 0);
}

TEST(AssignIdsTest, AParentGivenByUuidBecomesItsId) {
  std::vector<DeviceInfo> devices = {Make({"gpu", "nohost"}),
                                     Make({"gpu", "nohost"})};
  devices[0].uuid = "GPU-0000";
  devices[1].uuid = "MIG-0000-0000";
  devices[1].parent = "GPU-0000";
  AssignIds("n1", devices);
  EXPECT_EQ(devices[1].parent, "n1/gpu0");
  EXPECT_EQ(devices[0].parent, "");
}

TEST(SameDeviceSetTest, AHealthChangeIsAChange) {
  std::vector<DeviceInfo> a = {Make({"gpu", "nohost"}, "n1/gpu0")};
  std::vector<DeviceInfo> b = a;
  b[0].health = DeviceHealth::kDegraded;
  b[0].health_reason = "4 volatile uncorrected ECC errors";
  EXPECT_FALSE(SameDeviceSet(a, b));
  b[0].utilisation = 0.5;
  a = b;
  a[0].utilisation = 0.1;
  EXPECT_TRUE(SameDeviceSet(a, b));
}

TEST(SameDeviceSetTest, IgnoresUtilisationOnly) {
  std::vector<DeviceInfo> a = {Make({"gpu"})};
  std::vector<DeviceInfo> b = a;
  b[0].utilisation = 0.9;
  EXPECT_TRUE(SameDeviceSet(a, b));
  b[0].memory_bytes = 1;
  EXPECT_FALSE(SameDeviceSet(a, b));
  EXPECT_FALSE(SameDeviceSet(a, {}));
}

TEST(DeviceInfoTest, PrimaryKindSkipsHostAndNohost) {
  EXPECT_EQ(Make({"host", "cpu"}).PrimaryKind(), "cpu");
  EXPECT_EQ(Make({"nohost"}).PrimaryKind(), "device");
  EXPECT_TRUE(Make({"cpu", "host"}).IsHost());
  EXPECT_FALSE(Make({"gpu", "nohost"}).IsHost());
}

}  // namespace
}  // namespace ctxsel
