#include "server/placement/device_group.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/placement/device_class.h"
#include "server/placement/pick.h"

namespace ctxsel::server::placement {
namespace {

class DeviceGroupTest : public ::testing::Test {
 protected:
  DeviceGroupTest()
      : class_(MakeDeviceClass(0, {{"gpu"}, {"nvptx"}, {}, {}, {}}, "")),
        layout_(MakeNodeLayout(0, {{0, &class_}})),
        group_(&class_, &layout_) {}

  DeviceSlot* Add(const std::string& node, int index, double utilisation) {
    auto slot = std::make_unique<DeviceSlot>();
    slot->id = node + "/" + std::to_string(index);
    slot->node = node;
    slot->index = index;
    slot->properties.utilisation = utilisation;
    slot->device_class = &class_;
    slot->group = &group_;
    group_.Add(slot.get());
    slots_.push_back(std::move(slot));
    return slots_.back().get();
  }
  std::string Picked(Policy policy, uint64_t ticket = 0) {
    const DeviceSlot* d = PickDevice(policy, {&group_}, ticket);
    return d == nullptr ? "none" : d->id;
  }

  DeviceClass class_;
  NodeLayout layout_;
  DeviceGroup group_;
  std::vector<std::unique_ptr<DeviceSlot>> slots_;
};

TEST_F(DeviceGroupTest, EmptyGroupPicksNothing) {
  EXPECT_EQ(Picked(Policy::kLeastLoaded), "none");
  EXPECT_EQ(Picked(Policy::kPack), "none");
  EXPECT_EQ(Picked(Policy::kSpread), "none");
}

// Ties go to the lower id in byte order, whether ids differ in their first
// 16 bytes (which the order keeps beside each device) or only after them.
TEST_F(DeviceGroupTest, TiesGoToTheLowerIdWhereverTheIdsDiffer) {
  const std::string long_node = "a-node-with-a-long-name";  // > 16 bytes
  Add(long_node, 10, 0.5);
  Add(long_node, 9, 0.5);
  Add("b", 0, 0.5);
  Add("a", 1, 0.5);
  std::vector<const DeviceSlot*> order;
  group_.AppendLeastLoaded(10, &order);
  std::vector<std::string> ids;
  for (const DeviceSlot* d : order) ids.push_back(d->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a-node-with-a-long-name/10",
                                           "a-node-with-a-long-name/9", "a/1",
                                           "b/0"}));
  // A change of utilisation re-sorts the device it names, and only it.
  group_.SetUtilisation(slots_[0].get(), 0.75);
  EXPECT_EQ(Picked(Policy::kPack), "a-node-with-a-long-name/10");
  group_.SetUtilisation(slots_[0].get(), 0.25);
  EXPECT_EQ(Picked(Policy::kLeastLoaded), "a-node-with-a-long-name/10");
  group_.Remove(slots_[0].get());
  EXPECT_EQ(Picked(Policy::kLeastLoaded), "a-node-with-a-long-name/9");
}

TEST_F(DeviceGroupTest, OrdersFollowUtilisationChanges) {
  DeviceSlot* a = Add("a", 0, 0.5);
  DeviceSlot* b = Add("b", 0, 0.5);
  Add("b", 1, 0.9);
  EXPECT_EQ(Picked(Policy::kLeastLoaded), "a/0");
  EXPECT_EQ(Picked(Policy::kPack), "b/1");
  group_.SetUtilisation(a, 0.95);
  EXPECT_EQ(Picked(Policy::kLeastLoaded), "b/0");
  EXPECT_EQ(Picked(Policy::kPack), "a/0");
  group_.SetUtilisation(b, 1.0);
  group_.Remove(a);
  EXPECT_EQ(group_.size(), 2u);
  EXPECT_EQ(Picked(Policy::kPack), "b/1");
  EXPECT_EQ(group_.node_count(), 1u);  // a left with its only device
}

TEST_F(DeviceGroupTest, SpreadWalksNodesByName) {
  Add("c", 0, 0.0);
  Add("a", 0, 0.6);
  Add("a", 1, 0.3);
  Add("b", 0, 0.0);
  ASSERT_EQ(group_.node_count(), 3u);
  EXPECT_EQ(group_.node(0), "a");
  EXPECT_EQ(Picked(Policy::kSpread, 0), "a/1");
  EXPECT_EQ(Picked(Policy::kSpread, 1), "b/0");
  EXPECT_EQ(Picked(Policy::kSpread, 2), "c/0");
  EXPECT_EQ(Picked(Policy::kSpread, 3), "a/1");
}

TEST_F(DeviceGroupTest, LeastLoadedDevicesSkipsTheChosenOne) {
  DeviceSlot* a = Add("a", 0, 0.1);
  Add("a", 1, 0.2);
  Add("a", 2, 0.3);
  std::vector<const DeviceSlot*> next = LeastLoadedDevices({&group_}, 5, a);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0]->id, "a/1");
  EXPECT_EQ(next[1]->id, "a/2");
  EXPECT_EQ(LeastLoadedDevices({&group_}, 1, nullptr).size(), 1u);
}

TEST(DeviceClassTest, KeysIgnoreOrderAndNamesAreSelectors) {
  selector::DeviceTraits a{
      {"gpu", "nohost"}, {"sm_90", "nvptx"}, {}, {"nvidia"}, {}};
  selector::DeviceTraits b{
      {"nohost", "gpu"}, {"nvptx", "sm_90"}, {}, {"nvidia"}, {}};
  EXPECT_EQ(DeviceClassKey(a, "x"), DeviceClassKey(b, "x"));
  EXPECT_NE(DeviceClassKey(a, "x"), DeviceClassKey(a, "y"));
  b.isa.insert("ptx");
  EXPECT_NE(DeviceClassKey(a, "x"), DeviceClassKey(b, "x"));
  std::string name = DeviceClassName(a);
  EXPECT_EQ(name,
            "device={kind(gpu, nohost), arch(nvptx, sm_90), vendor(nvidia)}");
  EXPECT_TRUE(selector::Selector::Parse(name).ok());
}

TEST(DeviceClassTest, LayoutsShareKeysAndTargetDevices) {
  DeviceClass cpu = MakeDeviceClass(1, {{"cpu"}, {"x86_64"}, {}, {}, {}}, "");
  DeviceClass gpu = MakeDeviceClass(2, {{"gpu"}, {"nvptx"}, {}, {}, {}}, "");
  NodeLayout l = MakeNodeLayout(0, {{1, &gpu}, {-1, &cpu}, {0, &gpu}});
  EXPECT_EQ(l.key, "-1:1,0:2,1:2");
  EXPECT_EQ(NodeLayoutKey({{0, &gpu}, {-1, &cpu}, {1, &gpu}}), l.key);
  selector::TargetDevicesView from_gpu = l.TargetDevicesFor(2);
  EXPECT_EQ(from_gpu.default_device, 0);
  EXPECT_EQ(from_gpu.devices->size(), 3u);
  selector::TargetDevicesView from_cpu = l.TargetDevicesFor(1);
  EXPECT_EQ(from_cpu.default_device, -1);
  // One copy of the node's traits, whatever the number of classes.
  EXPECT_EQ(from_cpu.devices, from_gpu.devices);
  EXPECT_EQ(from_gpu.devices, &l.target_devices.devices);
}

}  // namespace
}  // namespace ctxsel::server::placement
