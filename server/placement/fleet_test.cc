#include "server/placement/fleet.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server::placement::internal {
namespace {

// A device of `node` at `index` whose traits no other device shares.
Device Distinct(const std::string& node, int index) {
  Device d;
  d.id = node + "/" + std::to_string(index);
  d.node = node;
  d.index = index;
  d.traits.kind = {"gpu"};
  d.traits.arch = {"arch" + std::to_string(index)};
  return d;
}

std::vector<Device> DistinctDevices(const std::string& node, int count) {
  std::vector<Device> devices;
  for (int i = 0; i < count; ++i) devices.push_back(Distinct(node, i));
  return devices;
}

TEST(FleetTest, ManyDistinctDevicesShareOneTargetDeviceTable) {
  Fleet fleet;
  FleetClassChanges changes;
  ASSERT_TRUE(
      fleet.ReplaceNode("n1", DistinctDevices("n1", 2000), &changes).ok());
  EXPECT_EQ(changes.created.size(), 2000u);
  EXPECT_EQ(fleet.class_count(), 2000u);
  EXPECT_EQ(fleet.layout_count(), 1u);
  Fleet::Reader reader(fleet);
  std::vector<const DeviceGroup*> groups = reader.groups();
  ASSERT_EQ(groups.size(), 2000u);
  // Every class sees the node's 2,000 devices through one table (a copy per
  // class made a report of n distinct devices O(n^2) in time and memory),
  // each with its own device as the default.
  const NodeLayout& layout = groups.front()->layout();
  for (const DeviceGroup* g : groups) {
    ASSERT_EQ(&g->layout(), &layout);
    selector::TargetDevicesView view =
        layout.TargetDevicesFor(g->device_class().id);
    EXPECT_EQ(view.devices, &layout.target_devices.devices);
    EXPECT_EQ(view.devices->at(view.default_device).arch,
              g->device_class().traits.arch);
  }
}

TEST(FleetTest, ClassesAndLayoutsAreFreedWithTheirLastDevice) {
  Fleet fleet;
  FleetClassChanges changes;
  ASSERT_TRUE(fleet.ReplaceNode("n1", DistinctDevices("n1", 3), &changes).ok());
  ASSERT_TRUE(fleet.ReplaceNode("n2", DistinctDevices("n2", 2), &changes).ok());
  EXPECT_EQ(fleet.class_count(), 3u);
  EXPECT_EQ(fleet.layout_count(), 2u);
  const int arch2 = changes.created[2]->id;

  changes = {};
  ASSERT_TRUE(fleet.RemoveNode("n1", &changes));
  // arch2 was only on n1; arch0 and arch1 live on with n2.
  EXPECT_THAT(changes.freed, ::testing::ElementsAre(arch2));
  EXPECT_EQ(fleet.class_count(), 2u);
  EXPECT_EQ(fleet.layout_count(), 1u);

  changes = {};
  ASSERT_TRUE(fleet.RemoveNode("n2", &changes));
  EXPECT_EQ(changes.freed.size(), 2u);
  EXPECT_EQ(fleet.class_count(), 0u);
  EXPECT_EQ(fleet.layout_count(), 0u);
  EXPECT_TRUE(fleet.Classes().empty());
}

TEST(FleetTest, ReReportKeepsClassIds) {
  Fleet fleet;
  FleetClassChanges first;
  ASSERT_TRUE(fleet.ReplaceNode("n1", DistinctDevices("n1", 2), &first).ok());
  const int arch1 = first.created[1]->id;
  FleetClassChanges again;
  ASSERT_TRUE(fleet.ReplaceNode("n1", DistinctDevices("n1", 2), &again).ok());
  // Same classes: nothing created or freed, so cached resolutions stay.
  EXPECT_TRUE(again.created.empty());
  EXPECT_TRUE(again.freed.empty());
  FleetClassChanges shrink;
  ASSERT_TRUE(fleet.ReplaceNode("n1", DistinctDevices("n1", 1), &shrink).ok());
  EXPECT_THAT(shrink.freed, ::testing::ElementsAre(arch1));
}

TEST(FleetTest, SuspectNodesMoveToSuspectGroups) {
  Fleet fleet;
  FleetClassChanges changes;
  Device a = Distinct("a", 0), b = Distinct("b", 0);
  ASSERT_TRUE(fleet.ReplaceNode("a", {a}, &changes).ok());
  ASSERT_TRUE(fleet.ReplaceNode("b", {b}, &changes).ok());
  fleet.SetSuspect("a", true);
  fleet.SetSuspect("nobody", true);  // no-op
  {
    Fleet::Reader reader(fleet);
    EXPECT_TRUE(reader.has_suspect());
    std::vector<const DeviceGroup*> groups = reader.groups();
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_FALSE(groups[0]->suspect());
    EXPECT_TRUE(groups[1]->suspect());
    EXPECT_EQ(groups[1]->LeastLoaded()->id, "a/0");
  }
  fleet.SetSuspect("a", false);
  Fleet::Reader reader(fleet);
  EXPECT_FALSE(reader.has_suspect());
  EXPECT_EQ(reader.groups().size(), 1u);
}

}  // namespace
}  // namespace ctxsel::server::placement::internal
