#include "server/placement/fleet.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
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

// has_suspect() is a count kept as groups come and go: a suspect node's
// cordoned device does not count (it is excluded), and a suspect node that
// leaves takes its count with it.
TEST(FleetTest, HasSuspectFollowsGroupsAsTheyComeAndGo) {
  Fleet fleet;
  FleetClassChanges changes;
  auto has_suspect = [&] { return Fleet::Reader(fleet).has_suspect(); };
  ASSERT_TRUE(fleet.ReplaceNode("a", {Distinct("a", 0)}, &changes).ok());
  ASSERT_TRUE(fleet.ReplaceNode("b", {Distinct("b", 0)}, &changes).ok());
  fleet.SetCordons({Cordon{.device = "a/0", .reason = "repair"}});
  fleet.SetSuspect("a", true);
  EXPECT_FALSE(has_suspect());  // its one device is excluded
  fleet.SetCordons({});
  EXPECT_TRUE(has_suspect());
  fleet.SetSuspect("b", true);
  fleet.SetSuspect("a", false);
  EXPECT_TRUE(has_suspect());
  EXPECT_TRUE(fleet.RemoveNode("b", nullptr));
  EXPECT_FALSE(has_suspect());
  fleet.SetSuspect("a", true);
  ASSERT_TRUE(
      fleet.ReplaceNode("a", {Distinct("a", 0), Distinct("a", 1)}, &changes)
          .ok());
  EXPECT_FALSE(has_suspect());  // a report is news from the node
  fleet.SetSuspect("a", true);
  EXPECT_TRUE(has_suspect());
  EXPECT_TRUE(fleet.RemoveNode("a", nullptr));
  EXPECT_FALSE(has_suspect());
  Fleet::Reader reader(fleet);
  EXPECT_EQ(reader.group_count(), 0u);
}

// Listings read a node's published record, not the fleet under its lock
// (node_listing.h): a beat's values are read whole while beats keep coming,
// a cordon replaces the record, and a record a listing holds stays readable
// after its node and classes left the fleet.
TEST(FleetTest, ListingsReadPublishedRecordsAndBeatsWhole) {
  for (int devices : {4, 12}) {  // utilisations in the record, and beside it
    SCOPED_TRACE(devices);
    Fleet fleet;
    ASSERT_TRUE(
        fleet.ReplaceNode("n1", DistinctDevices("n1", devices), nullptr).ok());
    std::shared_ptr<const NodeListing> listed = fleet.Listing("n1");
    ASSERT_NE(listed, nullptr);
    ASSERT_EQ(listed->devices().size(), static_cast<size_t>(devices));
    // Each beat gives every device the same value, 0.25 and 0.75 in turn.
    std::atomic<bool> stop{false};
    std::thread beats([&] {
      std::vector<std::pair<std::string, double>> beat;
      for (int n = 0; !stop.load(); ++n) {
        beat.clear();
        for (int i = 0; i < devices; ++i) {
          beat.emplace_back("n1/" + std::to_string(i), n % 2 ? 0.75 : 0.25);
        }
        ASSERT_TRUE(fleet.UpdateUtilisations("n1", beat).ok());
      }
    });
    NodeListing::Utilisations read;
    int torn = 0;
    for (int n = 0; n < 20000; ++n) {
      listed->ReadUtilisations(&read);
      for (double u : read) torn += u != read[0];
    }
    stop = true;
    beats.join();
    EXPECT_EQ(torn, 0) << "a listing saw part of a beat";

    fleet.SetCordons({Cordon{.device = "n1/3", .reason = "repair"}});
    std::shared_ptr<const NodeListing> cordoned = fleet.Listing("n1");
    ASSERT_NE(cordoned, listed);
    EXPECT_TRUE(cordoned->ToDevice(3, 0).condition.cordoned);
    EXPECT_FALSE(listed->ToDevice(3, 0).condition.cordoned);
    EXPECT_TRUE(fleet.RemoveNode("n1", nullptr));
    EXPECT_EQ(fleet.Listing("n1"), nullptr);
    // The classes were freed with the node; the record keeps its own.
    EXPECT_EQ(fleet.class_count(), 0u);
    EXPECT_THAT(listed->ToDevice(2, 0.5).traits.arch,
                ::testing::ElementsAre("arch2"));
  }
}

// A record packs its devices' fields and strings (ListedDevice); it gives
// every one back as reported, cordon included, after its node left the
// fleet and another node took its ids.
TEST(FleetTest, ListingGivesBackEveryFieldAfterItsNodeIsGone) {
  Fleet fleet;
  std::vector<Device> devices = DistinctDevices("node-with-a-long-name", 3);
  Device& whole = devices[1];
  whole.properties = {.memory_bytes = 80ull << 30,
                      .compute_units = 132,
                      .utilisation = 0.5,
                      .claim_capacity = 4};
  whole.identity = {.uuid = "GPU-a7829a6c-af72-9e35-67cb-4f9af701b63b",
                    .pci_bus_id = "0000:00:06.0",
                    .vendor_index = 3};
  whole.condition.health = DeviceHealth::kDegraded;
  whole.condition.health_reason = "2 retired pages pending";
  Device& part = devices[2];
  part.condition.parent = whole.id;
  part.identity.uuid = "MIG-0c1d";
  ASSERT_TRUE(
      fleet.ReplaceNode("node-with-a-long-name", devices, nullptr).ok());
  fleet.SetCordons(
      {Cordon{.device = part.id, .reason = "repair", .drain = true}});
  std::shared_ptr<const NodeListing> listed =
      fleet.Listing("node-with-a-long-name");
  ASSERT_NE(listed, nullptr);
  EXPECT_TRUE(fleet.RemoveNode("node-with-a-long-name", nullptr));
  // Another node reports the same ids: the fleet's strings are new ones.
  ASSERT_TRUE(fleet
                  .ReplaceNode("other",
                               DistinctDevices("node-with-a-long-name", 3),
                               nullptr)
                  .ok());

  ASSERT_EQ(listed->node(), "node-with-a-long-name");
  ASSERT_EQ(listed->devices().size(), 3u);
  for (size_t i = 0; i < devices.size(); ++i) {
    SCOPED_TRACE(i);
    const Device d = listed->ToDevice(i, 0.25);
    EXPECT_EQ(d.id, devices[i].id);
    EXPECT_EQ(d.node, "node-with-a-long-name");
    EXPECT_EQ(d.index, devices[i].index);
    EXPECT_EQ(listed->devices()[i].index, devices[i].index);
    EXPECT_EQ(d.properties.memory_bytes, devices[i].properties.memory_bytes);
    EXPECT_EQ(d.properties.compute_units, devices[i].properties.compute_units);
    EXPECT_EQ(d.properties.claim_capacity,
              devices[i].properties.claim_capacity);
    EXPECT_EQ(d.properties.utilisation, 0.25);
    EXPECT_EQ(d.identity, devices[i].identity);
    EXPECT_EQ(d.traits.arch, devices[i].traits.arch);
    DeviceCondition expected = devices[i].condition;
    if (i == 2) {
      expected.cordoned = expected.draining = true;
      expected.cordon_reason = "repair";
    }
    EXPECT_EQ(d.condition, expected);
  }
}

// The fleet keys its id and UUID indexes by views of the slots' own
// strings: when two devices report one UUID the later report's wins, and
// the index stays right whichever of them leaves first.
TEST(FleetTest, UuidIndexFollowsTheLaterReportWhicheverLeavesFirst) {
  for (bool earlier_leaves_first : {true, false}) {
    SCOPED_TRACE(earlier_leaves_first);
    Fleet fleet;
    Device a = Distinct("a", 0), b = Distinct("b", 0);
    a.identity.uuid = b.identity.uuid = "GPU-one-uuid-reported-twice-over";
    ASSERT_TRUE(fleet.ReplaceNode("a", {a}, nullptr).ok());
    ASSERT_TRUE(fleet.ReplaceNode("b", {b}, nullptr).ok());
    {
      Fleet::Reader reader(fleet);
      ASSERT_NE(reader.device(a.identity.uuid), nullptr);
      EXPECT_EQ(reader.device(a.identity.uuid)->id, "b/0");
      EXPECT_EQ(reader.device("a/0")->id, "a/0");
    }
    EXPECT_TRUE(fleet.RemoveNode(earlier_leaves_first ? "a" : "b", nullptr));
    // Churn the heap over the freed slot's strings.
    ASSERT_TRUE(fleet.ReplaceNode("c", DistinctDevices("c", 8), nullptr).ok());
    Fleet::Reader reader(fleet);
    const DeviceSlot* by_uuid = reader.device(a.identity.uuid);
    if (earlier_leaves_first) {
      ASSERT_NE(by_uuid, nullptr);
      EXPECT_EQ(by_uuid->id, "b/0");
      EXPECT_EQ(reader.device("a/0"), nullptr);
    } else {
      // The earlier device is live but no longer the UUID's (as before).
      EXPECT_EQ(by_uuid, nullptr);
      EXPECT_EQ(reader.device("a/0")->id, "a/0");
      EXPECT_EQ(reader.device("b/0"), nullptr);
    }
  }
}

}  // namespace
}  // namespace ctxsel::server::placement::internal
