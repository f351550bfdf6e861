#include "server/fleet/inventory.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer_bridge.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The real device store (placement's Fleet through PlacerBridge), with
// what the inventory asked of it recorded.
class RecordingStore : public DeviceStore {
 public:
  absl::Status ReplaceNodeDevices(const std::string& node,
                                  const std::vector<Device>& devices) override {
    absl::Status s = bridge_.ReplaceNodeDevices(node, devices);
    if (s.ok()) nodes[node] = devices.size();
    return s;
  }
  void RemoveNodeDevices(const std::string& node) override {
    nodes.erase(node);
    bridge_.RemoveNodeDevices(node);
  }
  bool RecordBeat(const std::string& node,
                  absl::Span<const DeviceBeat> beat) override {
    const bool recorded = bridge_.RecordBeat(node, beat);
    if (recorded) ++beats[node];
    return recorded;
  }
  void SetNodeSuspect(const std::string& node, bool is_suspect) override {
    suspect[node] = is_suspect;
    bridge_.SetNodeSuspect(node, is_suspect);
  }
  std::vector<Device> NodeDevices(const std::string& node) const override {
    return bridge_.NodeDevices(node);
  }
  // The utilisation the store holds for `device_id` of `node`.
  double Utilisation(const std::string& node, const std::string& device_id) {
    for (const Device& d : NodeDevices(node)) {
      if (d.id == device_id) return d.properties.utilisation;
    }
    return -1;
  }

  std::map<std::string, bool> suspect;
  std::map<std::string, int> beats;  // recorded beats per node
  std::map<std::string, size_t> nodes;

 private:
  placement::Placer placer_;
  PlacerBridge bridge_{&placer_};
};

class RecordingObserver : public InventoryObserver {
 public:
  void NodeReported(const NodeState& node) override {
    told.push_back(absl::StrCat("reported ", node.id, " (", node.devices.size(),
                                " devices)"));
  }
  void NodeRemoved(const std::string& node,
                   const std::string& reason) override {
    told.push_back(absl::StrCat("removed ", node, ": ", reason));
  }
  void NodeBeat(const std::string& node) override {
    told.push_back(absl::StrCat("beat ", node));
  }
  std::vector<std::string> told;
};

Device Gpu(int index, const std::string& arch) {
  Device d;
  d.index = index;
  d.traits.kind = {"gpu", "nohost"};
  d.traits.arch = {arch};
  d.properties.memory_bytes = 80ull << 30;
  return d;
}

Device HostCpu() {
  Device d;
  d.index = -1;
  d.traits.kind = {"cpu", "host"};
  d.traits.arch = {"x86_64"};
  return d;
}

NodeState Node(const std::string& id, std::vector<Device> devices) {
  NodeState node;
  node.id = id;
  node.devices = std::move(devices);
  return node;
}

// A device filter the test knows to be valid.
DeviceFilter Filter(const std::string& text) {
  absl::StatusOr<DeviceFilter> filter =
      DeviceFilter::Parse(text, "device_filter");
  EXPECT_TRUE(filter.ok()) << filter.status();
  return filter.ok() ? *filter : DeviceFilter();
}

class InventoryTest : public ::testing::Test {
 protected:
  InventoryTest() : inventory_(TestOptions(), &store_, &observer_) {}

  InventoryOptions TestOptions() {
    InventoryOptions options;
    options.ttl = absl::Seconds(3);
    options.event_history = 8;
    options.now = [this] { return now_; };
    return options;
  }

  std::vector<std::string> DeviceIds(const std::string& match,
                                     const std::string& node = "") {
    auto page = inventory_.ListDevices(Filter(match), node, 0, "");
    EXPECT_TRUE(page.ok()) << page.status();
    std::vector<std::string> ids;
    if (page.ok()) {
      for (const Device& d : page->items) ids.push_back(d.id);
    }
    return ids;
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  RecordingStore store_;
  RecordingObserver observer_;
  Inventory inventory_;
};

TEST_F(InventoryTest, ReportFillsIdsAndSortsByIndex) {
  ASSERT_TRUE(
      inventory_
          .Report(Node("n1", {Gpu(1, "amdgcn"), HostCpu(), Gpu(0, "nvptx")}))
          .ok());
  EXPECT_THAT(DeviceIds(""), ElementsAre("n1/cpu0", "n1/gpu0", "n1/gpu1"));
  EXPECT_EQ(store_.nodes["n1"], 3u);
  EXPECT_THAT(observer_.told, ElementsAre("reported n1 (3 devices)"));
}

TEST_F(InventoryTest, ListDevicesMatchesSelector) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {HostCpu(), Gpu(0, "nvptx")})).ok());
  ASSERT_TRUE(
      inventory_.Report(Node("n2", {HostCpu(), Gpu(0, "amdgcn")})).ok());
  EXPECT_THAT(DeviceIds("device={arch(nvptx)}"), ElementsAre("n1/gpu0"));
  EXPECT_THAT(DeviceIds("device={kind(gpu)}"),
              ElementsAre("n1/gpu0", "n2/gpu0"));
  EXPECT_THAT(DeviceIds("device={kind(cpu)}", "n2"), ElementsAre("n2/cpu0"));
  // A device whose node's device 0 is an AMD GPU.
  EXPECT_THAT(DeviceIds("target_device={device_num(0), arch(amdgcn)}"),
              ElementsAre("n2/cpu0", "n2/gpu0"));
}

TEST_F(InventoryTest, BadReportsAreRejected) {
  Device twice = Gpu(0, "nvptx");
  twice.id = "n1/gpu0";
  EXPECT_THAT(inventory_.Report(Node("n1", {twice, twice})).message(),
              HasSubstr("node.devices[1].id: 'n1/gpu0' is used twice"));
  Device busy = Gpu(0, "nvptx");
  busy.properties.utilisation = 1.5;
  EXPECT_THAT(inventory_.Report(Node("n1", {busy})).message(),
              HasSubstr("node.devices[0].utilisation"));
  Device other = Gpu(0, "nvptx");
  other.node = "n9";
  EXPECT_THAT(inventory_.Report(Node("n1", {other})).message(),
              HasSubstr("node.devices[0].node"));
  EXPECT_THAT(inventory_.Report(Node("", {})).message(),
              HasSubstr("node.id: empty"));
  Device sycl = Gpu(0, "nvptx");
  sycl.sycl_architecture = "nvidia_gpu_sm_91";
  EXPECT_THAT(inventory_.Report(Node("n1", {sycl})).message(),
              HasSubstr("node.devices[0].sycl_architecture"));
  // A device id of another node, even one that node has not reported yet:
  // ids are scoped to their node.
  Device a = Gpu(0, "nvptx");
  a.id = "n2/gpu0";
  EXPECT_THAT(inventory_.Report(Node("n1", {a})).message(),
              HasSubstr("node.devices[0].id: 'n2/gpu0' must start with 'n1/'"));
  ASSERT_TRUE(inventory_.Report(Node("n2", {a})).ok());
}

TEST_F(InventoryTest, SyclArchitectureAddsCatalogNames) {
  Device d = Gpu(0, "nvptx");
  d.sycl_architecture = "nvidia_gpu_sm_90";
  ASSERT_TRUE(inventory_.Report(Node("n1", {d})).ok());
  EXPECT_THAT(DeviceIds("device={arch(nvidia_gpu_sm_90)}"),
              ElementsAre("n1/gpu0"));
}

// The reports: a bare SYCL architecture gets every trait the
// catalog knows (it used to get arch aliases only, and Select then returned
// the base function on an H100); trait-less devices, `kind: GPU` and
// `kind: tpu` are rejected or normalised.
TEST_F(InventoryTest, ReportsAreNormalisedNotTrusted) {
  Device bare;
  bare.index = 0;
  bare.sycl_architecture = "nvidia_gpu_sm_90";
  ASSERT_TRUE(inventory_.Report(Node("n1", {bare})).ok());
  EXPECT_THAT(DeviceIds("device={kind(gpu), isa(sm_90), vendor(nvidia)}"),
              ElementsAre("n1/gpu0"));

  Device shouting;
  shouting.index = 0;
  shouting.traits.kind = {"GPU"};
  shouting.traits.vendor = {"Acme"};
  ASSERT_TRUE(inventory_.Report(Node("n2", {shouting})).ok());
  EXPECT_THAT(DeviceIds("device={kind(gpu), vendor(acme)}"),
              ElementsAre("n2/gpu0"));

  Device tpu;
  tpu.traits.kind = {"tpu"};
  EXPECT_THAT(inventory_.Report(Node("n3", {tpu})).message(),
              HasSubstr("node.devices[0].traits.kind: 'tpu' is not a device "
                        "kind"));
  Device nothing;
  nothing.traits.vendor = {"nvidia"};
  EXPECT_THAT(inventory_.Report(Node("n3", {nothing})).message(),
              HasSubstr("node.devices[0].traits.kind: empty and no "
                        "sycl_architecture"));
}

TEST_F(InventoryTest, EachVendorNumbersItsOwnDevices) {
  Device nvidia, intel, amd, cpu = HostCpu();
  nvidia.index = 0;
  nvidia.sycl_architecture = "nvidia_gpu_sm_90";
  intel.index = 1;
  intel.sycl_architecture = "intel_gpu_pvc";
  amd.index = 2;
  amd.sycl_architecture = "amd_gpu_gfx90a";
  ASSERT_TRUE(inventory_.Report(Node("mixed", {cpu, nvidia, intel, amd})).ok());
  auto page = inventory_.ListDevices(Filter(""), "", 0, "");
  ASSERT_TRUE(page.ok()) << page.status();
  std::map<std::string, int> vendor_index;
  for (const Device& d : page->items) {
    vendor_index[d.id] = d.identity.vendor_index;
  }
  EXPECT_EQ(vendor_index["mixed/cpu0"], -1);
  EXPECT_EQ(vendor_index["mixed/gpu0"], 0);
  EXPECT_EQ(vendor_index["mixed/gpu1"], 0);
  EXPECT_EQ(vendor_index["mixed/gpu2"], 0);
}

// The store holds the one fleet-wide index of device ids: a report naming
// another node's device is ALREADY_EXISTS (as the API has always said) and
// changes nothing.
TEST_F(InventoryTest, AnotherNodesDeviceIdIsAlreadyExists) {
  Device a = Gpu(0, "nvptx");
  a.id = "n1/gpu0";
  ASSERT_TRUE(inventory_.Report(Node("n1", {a})).ok());
  // Ids are scoped to their node, so only node ids with a slash collide:
  // "n1" and "n1/gpu0" may both name "n1/gpu0/x".
  Device b = Gpu(1, "nvptx");
  b.id = "n1/gpu0/x";
  ASSERT_TRUE(inventory_.Report(Node("n1", {a, b})).ok());
  b.index = 0;
  absl::Status s = inventory_.Report(Node("n1/gpu0", {b}));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(),
              HasSubstr("node.devices[0].id: 'n1/gpu0/x' belongs to node "
                        "'n1'"));
  EXPECT_THAT(DeviceIds(""), ElementsAre("n1/gpu0", "n1/gpu0/x"));
  int64_t sequence = 0;
  EXPECT_EQ(inventory_.Nodes(&sequence).size(), 1u);
}

TEST_F(InventoryTest, HeartbeatsKeepNodesAliveUntilTtl) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  ASSERT_TRUE(inventory_.Report(Node("n2", {Gpu(0, "nvptx")})).ok());
  now_ += absl::Seconds(2);
  auto beat = inventory_.Heartbeat("n1", {{"n1/gpu0", 0.75}});
  ASSERT_TRUE(beat.ok());
  EXPECT_EQ(*beat, Inventory::BeatAnswer::kRecorded);
  EXPECT_EQ(store_.Utilisation("n1", "n1/gpu0"), 0.75);
  now_ += absl::Seconds(2);
  EXPECT_THAT(inventory_.ExpireStale(), ElementsAre("n2"));
  EXPECT_THAT(DeviceIds(""), ElementsAre("n1/gpu0"));
  EXPECT_EQ(store_.nodes.count("n2"), 0u);
  EXPECT_THAT(store_.NodeDevices("n2"), IsEmpty());
  EXPECT_EQ(observer_.told.back(), "removed n2: expired (no heartbeat for 3s)");
  auto page = inventory_.ListDevices(Filter(""), "", 0, "");
  EXPECT_EQ(page->items[0].properties.utilisation, 0.75);
}

TEST_F(InventoryTest, ResetSilenceGivesEveryNodeATtlFromNow) {
  // A replica stale for 10 s refused every beat; back in step, its nodes
  // have a TTL from then, and only one that stays silent expires.
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  ASSERT_TRUE(inventory_.Report(Node("n2", {Gpu(0, "nvptx")})).ok());
  now_ += absl::Seconds(10);
  inventory_.ResetSilence();
  EXPECT_THAT(inventory_.ExpireStale(), IsEmpty());
  now_ += absl::Seconds(2);
  ASSERT_TRUE(inventory_.Heartbeat("n1", {}).ok());
  now_ += absl::Seconds(2);
  EXPECT_THAT(inventory_.ExpireStale(), ElementsAre("n2"));
}

TEST_F(InventoryTest, EachBeatIsRecordedOnceInTheStore) {
  ASSERT_TRUE(
      inventory_.Report(Node("n1", {Gpu(0, "nvptx"), Gpu(1, "nvptx")})).ok());
  observer_.told.clear();
  EXPECT_EQ(*inventory_.Heartbeat("n1", {{"n1/gpu0", 0.25}, {"n1/gpu1", 0.5}}),
            Inventory::BeatAnswer::kRecorded);
  EXPECT_EQ(store_.beats["n1"], 1);
  EXPECT_EQ(store_.Utilisation("n1", "n1/gpu0"), 0.25);
  EXPECT_EQ(store_.Utilisation("n1", "n1/gpu1"), 0.5);
  // Listings read the store: there is no second copy to drift.
  auto page = inventory_.ListDevices(Filter(""), "n1", 0, "");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items[1].properties.utilisation, 0.5);
  EXPECT_THAT(observer_.told, ElementsAre("beat n1"));
  // A beat naming a device the node does not have records nothing.
  EXPECT_EQ(*inventory_.Heartbeat("n1", {{"n1/gpu0", 0.75}, {"n1/gpu9", 0.1}}),
            Inventory::BeatAnswer::kUnknownDevice);
  EXPECT_EQ(store_.beats["n1"], 1);
  EXPECT_EQ(store_.Utilisation("n1", "n1/gpu0"), 0.25);
  EXPECT_THAT(observer_.told, ElementsAre("beat n1"));
}

TEST_F(InventoryTest, UnknownNodeOrDeviceAsksForReport) {
  EXPECT_EQ(*inventory_.Heartbeat("ghost", {}),
            Inventory::BeatAnswer::kUnknownNode);
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  EXPECT_EQ(*inventory_.Heartbeat("n1", {{"n1/gpu7", 0.1}}),
            Inventory::BeatAnswer::kUnknownDevice);
  EXPECT_EQ(inventory_.Heartbeat("n1", {{"n1/gpu0", -0.1}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(InventoryTest, EventsTellAddedChangedRemoved) {
  int64_t sequence = -1;
  EXPECT_THAT(inventory_.Nodes(&sequence), IsEmpty());
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  // The same report again changes nothing.
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "amdgcn")})).ok());
  ASSERT_TRUE(inventory_.Deregister("n1").ok());
  EXPECT_EQ(inventory_.Deregister("n1").code(), absl::StatusCode::kNotFound);
  auto events = inventory_.EventsAfter(sequence, absl::ZeroDuration());
  ASSERT_TRUE(events.ok());
  std::vector<InventoryEvent::Kind> kinds;
  for (const InventoryEvent& e : *events) kinds.push_back(e.kind);
  EXPECT_THAT(kinds, ElementsAre(InventoryEvent::Kind::kAdded,
                                 InventoryEvent::Kind::kChanged,
                                 InventoryEvent::Kind::kRemoved));
  EXPECT_EQ(events->back().reason, "deregistered");
  EXPECT_EQ(events->back().node->devices.size(), 1u);
  EXPECT_THAT(
      *inventory_.EventsAfter(events->back().sequence, absl::Milliseconds(1)),
      IsEmpty());
}

TEST_F(InventoryTest, SlowWatcherIsToldToWatchAgain) {
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(
        inventory_.Report(Node("n" + std::to_string(i), {Gpu(0, "nvptx")}))
            .ok());
  }
  EXPECT_EQ(inventory_.EventsAfter(0, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kOutOfRange);
  auto recent = inventory_.EventsAfter(6, absl::ZeroDuration());
  ASSERT_TRUE(recent.ok()) << recent.status();
  EXPECT_EQ(recent->size(), 6u);
}

std::vector<std::string> Described(const std::vector<InventoryEvent>& events) {
  std::vector<std::string> out;
  for (const InventoryEvent& e : events) {
    static constexpr const char* kKinds[] = {"added", "changed", "removed",
                                             "resync", "resync-end"};
    out.push_back(absl::StrCat(e.sequence, " ",
                               kKinds[static_cast<int>(e.kind)],
                               e.node == nullptr ? "" : " " + e.node->id));
  }
  return out;
}

TEST_F(InventoryTest, ResumeOnTheSameEpochReplaysExactlyTheMissedEvents) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  ASSERT_TRUE(inventory_.Report(Node("n2", {Gpu(0, "nvptx")})).ok());
  // A watcher saw event 2, then lost its stream; meanwhile two changes.
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "amdgcn")})).ok());
  ASSERT_TRUE(inventory_.Deregister("n2").ok());
  auto resumed = inventory_.StartWatch(
      {.resume_after = 2, .resume_epoch = inventory_.epoch()});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_FALSE(resumed->resync);
  EXPECT_THAT(Described(resumed->events),
              ElementsAre("3 changed n1", "4 removed n2"));
  EXPECT_EQ(resumed->sequence, 4);
  // Resuming after the latest event sends nothing first.
  auto latest = inventory_.StartWatch(
      {.initial = true, .resume_after = 4, .resume_epoch = inventory_.epoch()});
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_FALSE(latest->resync);
  EXPECT_THAT(latest->events, IsEmpty());
  EXPECT_EQ(latest->sequence, 4);
}

TEST_F(InventoryTest, ResumeResyncsWhenTheHistoryIsTrimmedOrTheEpochIsOther) {
  // The history keeps 8 events: 12 reports push the first 4 out.
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(
        inventory_.Report(Node(absl::StrCat("n", i), {Gpu(0, "nvptx")})).ok());
  }
  ASSERT_TRUE(inventory_.Deregister("n0").ok());
  const std::vector<std::string> snapshot = [] {
    std::vector<std::string> out;
    for (int i = 1; i < 12; ++i) out.push_back(absl::StrCat("13 resync n", i));
    std::sort(out.begin(), out.end());  // the inventory lists in id order
    out.push_back("13 resync-end");
    return out;
  }();
  RecordingStore other_store;
  const Inventory other(TestOptions(), &other_store);
  ASSERT_NE(other.epoch(), inventory_.epoch());
  for (const WatchFrom& from : {
           WatchFrom{.resume_after = 3, .resume_epoch = inventory_.epoch()},
           WatchFrom{.resume_after = 7, .resume_epoch = other.epoch()},
           // Another numbering's sequence may be past ours: not an error.
           WatchFrom{.resume_after = 99, .resume_epoch = other.epoch()},
           // Asked for, even where a replay was possible.
           WatchFrom{.initial = true, .resync = true},
           WatchFrom{.resume_after = 12,
           .resume_epoch = inventory_.epoch(),
           .resync = true},
       }) {
    auto start = inventory_.StartWatch(from);
    ASSERT_TRUE(start.ok()) << start.status();
    EXPECT_TRUE(start->resync);
    EXPECT_EQ(start->sequence, 13);
    EXPECT_THAT(Described(start->events), ::testing::ElementsAreArray(snapshot))
        << "after " << from.resume_after << " of " << from.resume_epoch;
  }
  // The oldest event still kept (6) can be resumed after 5.
  auto kept = inventory_.StartWatch(
      {.resume_after = 5, .resume_epoch = inventory_.epoch()});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(kept->resync);
  EXPECT_EQ(kept->events.size(), 8u);
}

TEST_F(InventoryTest, ResumeRejectsPositionsThatCannotBeOurs) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  struct Case {
    WatchFrom from;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {{.resume_after = -1, .resume_epoch = inventory_.epoch()},
            "resume_after"},
           {{.resume_after = 2, .resume_epoch = inventory_.epoch()},
            "resume_after"},
           {{.resume_after = 1}, "resume_epoch"},
       }) {
    auto start = inventory_.StartWatch(c.from);
    ASSERT_EQ(start.status().code(), absl::StatusCode::kInvalidArgument)
        << c.field;
    auto bad = GetDetail<google::rpc::BadRequest>(start.status());
    ASSERT_TRUE(bad.has_value()) << start.status();
    EXPECT_EQ(bad->field_violations(0).field(), c.field);
  }
}

TEST_F(InventoryTest, FreshWatchSendsTheLiveNodesOnlyWhenInitial) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  auto plain = inventory_.StartWatch({});
  ASSERT_TRUE(plain.ok());
  EXPECT_THAT(plain->events, IsEmpty());
  EXPECT_EQ(plain->sequence, 1);
  auto initial = inventory_.StartWatch({.initial = true});
  ASSERT_TRUE(initial.ok());
  EXPECT_THAT(Described(initial->events), ElementsAre("1 added n1"));
  EXPECT_EQ(initial->events[0].reason, "initial");
}

// Watches that start while a node is unchanged share its snapshot: 200
// watches of a 200-node fleet held 40,000 copies (issue 22 item 5).
TEST_F(InventoryTest, WatchSnapshotsShareNodesUntilTheyChange) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  auto first = inventory_.StartWatch({.initial = true});
  auto second = inventory_.StartWatch({.resync = true});
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->events.size(), 1);
  ASSERT_EQ(second->events.size(), 2);  // kResync n1, kResyncEnd
  EXPECT_EQ(first->events[0].node, second->events[0].node);
  EXPECT_EQ(second->events[0].kind, InventoryEvent::Kind::kResync);

  now_ += absl::Seconds(1);
  ASSERT_EQ(*inventory_.Heartbeat("n1", {{"n1/gpu0", 0.5}}),
            Inventory::BeatAnswer::kRecorded);
  auto after_beat = inventory_.StartWatch({.initial = true});
  ASSERT_TRUE(after_beat.ok());
  ASSERT_EQ(after_beat->events.size(), 1);
  EXPECT_NE(after_beat->events[0].node, first->events[0].node);
  EXPECT_EQ(after_beat->events[0].node->last_heartbeat, now_);
  EXPECT_EQ(after_beat->events[0].node->devices[0].properties.utilisation, 0.5);
}

// ResetSilence changes what a node's snapshot says (its last heartbeat), so
// a watch that starts after it shares no snapshot taken before.
TEST_F(InventoryTest, WatchAfterResetSilenceSeesTheNewLastHeartbeat) {
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "nvptx")})).ok());
  auto before = inventory_.StartWatch({.initial = true});
  ASSERT_TRUE(before.ok());
  now_ += absl::Seconds(5);
  inventory_.ResetSilence();
  auto after = inventory_.StartWatch({.initial = true});
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->events.size(), 1);
  EXPECT_EQ(after->events[0].node->last_heartbeat, now_);
}

TEST_F(InventoryTest, PagesNodesAndDevices) {
  for (const char* id : {"a", "b", "c"}) {
    ASSERT_TRUE(inventory_.Report(Node(id, {HostCpu(), Gpu(0, "nvptx")})).ok());
  }
  auto nodes = inventory_.ListNodes(2, "");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->items.size(), 2u);
  auto rest = inventory_.ListNodes(2, nodes->next_page_token);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].id, "c");
  EXPECT_TRUE(rest->next_page_token.empty());

  std::vector<std::string> ids;
  std::string token;
  do {
    auto page = inventory_.ListDevices(Filter(""), "", 4, token);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const Device& d : page->items) ids.push_back(d.id);
    token = page->next_page_token;
  } while (!token.empty());
  EXPECT_THAT(ids, ElementsAre("a/cpu0", "a/gpu0", "b/cpu0", "b/gpu0", "c/cpu0",
                               "c/gpu0"));
}

// Issue 15: a garbage token listed nothing (an empty page), a device token
// sent with another filter resumed the other listing, and an empty node id
// was "not known".
TEST_F(InventoryTest, BadPageTokensAndEmptyKeysAreInvalidArguments) {
  for (const char* id : {"a", "b", "c"}) {
    ASSERT_TRUE(inventory_.Report(Node(id, {HostCpu(), Gpu(0, "nvptx")})).ok());
  }
  for (const char* garbage : {"garbage", "YWJj", "bm9kZQ"}) {
    auto nodes = inventory_.ListNodes(2, garbage);
    EXPECT_EQ(nodes.status().code(), absl::StatusCode::kInvalidArgument)
        << garbage;
    auto bad = GetDetail<google::rpc::BadRequest>(nodes.status());
    ASSERT_TRUE(bad.has_value()) << garbage;
    EXPECT_EQ(bad->field_violations(0).field(), "page_token");
  }
  auto gpus = inventory_.ListDevices(Filter("device={kind(gpu)}"), "", 1, "");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_FALSE(gpus->next_page_token.empty());
  EXPECT_TRUE(inventory_
                  .ListDevices(Filter("device={kind(gpu)}"), "", 1,
                               gpus->next_page_token)
                  .ok());
  EXPECT_EQ(inventory_.ListDevices(Filter(""), "", 1, gpus->next_page_token)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(inventory_
                .ListDevices(Filter("device={kind(gpu)}"), "b", 1,
                             gpus->next_page_token)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  auto nodes = inventory_.ListNodes(1, "");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(inventory_.ListDevices(Filter(""), "", 1, nodes->next_page_token)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);

  absl::Status empty = inventory_.Deregister("");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      GetDetail<google::rpc::BadRequest>(empty)->field_violations(0).field(),
      "node");
  absl::Status unknown = inventory_.Deregister("zz");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(GetDetail<google::rpc::ResourceInfo>(unknown)->resource_name(),
            "zz");
}

// Placement's store matches a filter once per device class and layout and
// copies only the devices that pass (PlacerBridge::ScanDevices); its pages
// are those of the reference scan, which copies and matches every device
// (DeviceStore::ScanDevices), whatever the filter, node or page size.
TEST(InventoryListingTest, PlacementScanPagesAsTheReferenceScan) {
  placement::Placer placer;
  PlacerBridge bridge(&placer);
  Inventory fast({}, &bridge);
  RecordingStore reference_store;  // the default ScanDevices
  Inventory reference({}, &reference_store);
  for (int n = 0; n < 40; ++n) {
    std::vector<Device> devices = {HostCpu()};
    // Nodes of three layouts; a class on several of them.
    for (int i = 0; i <= n % 3; ++i) {
      devices.push_back(Gpu(i, (n + i) % 2 == 0 ? "nvptx" : "amdgcn"));
    }
    const NodeState node = Node(absl::StrCat("n", n / 10, n % 10), devices);
    ASSERT_TRUE(fast.Report(node).ok());
    ASSERT_TRUE(reference.Report(node).ok());
  }
  // Every page's device ids and token, until the last.
  auto pages = [](const Inventory& inventory, const std::string& filter,
                  const std::string& node, int page_size) {
    std::vector<std::string> listed;
    std::string token;
    do {
      auto page = inventory.ListDevices(Filter(filter), node, page_size, token);
      if (!page.ok()) return std::vector<std::string>{page.status().ToString()};
      for (const Device& d : page->items) listed.push_back(d.id);
      token = page->next_page_token;
      listed.push_back("token " + token);
    } while (!token.empty());
    return listed;
  };
  for (const std::string filter :
       {"", "device={arch(amdgcn)}", "device={kind(cpu)}",
        "target_device={device_num(1), arch(nvptx)}",
        "device={kind(gpu)}, target_device={device_num(0), arch(amdgcn)}",
        "device={arch(spirv)}"}) {
    for (const std::string node : {"", "n12", "n99"}) {
      for (int page_size : {1, 3, 0}) {
        const std::vector<std::string> want =
            pages(reference, filter, node, page_size);
        EXPECT_EQ(pages(fast, filter, node, page_size), want)
            << filter << " node '" << node << "' page_size " << page_size;
        EXPECT_GE(want.size(), 1u);
      }
    }
  }
  // Not vacuous: some filters list part of the fleet, across pages.
  EXPECT_EQ(pages(fast, "device={arch(amdgcn)}", "", 0).size(), 40u);
}

// A long filtered listing asks whether its call is still wanted and stops
// with the answer's error once it is not (the handler asks
// CallInterrupted, server/rpc/call_interrupt.h); counted, not timed.
TEST_F(InventoryTest, ListDevicesStopsWhenCancelled) {
  std::vector<Device> gpus;
  for (int i = 0; i < 100; ++i) gpus.push_back(Gpu(i, "nvptx"));
  RecordingStore big_store;
  Inventory big({}, &big_store);
  for (int n = 0; n < 50; ++n) {  // 5,000 devices
    ASSERT_TRUE(big.Report(Node(absl::StrCat("n", n), gpus)).ok());
  }
  int asked = 0;
  auto page =
      big.ListDevices(Filter("device={arch(amdgcn)}"), "", 0, "", {}, [&asked] {
        return ++asked == 3 ? absl::DeadlineExceededError("deadline passed")
                            : absl::OkStatus();
      });
  EXPECT_EQ(page.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(asked, 3);
}

TEST_F(InventoryTest, ReportsOverTheLimitsAreRefused) {
  InventoryOptions options;
  options.report_limits.max_devices_per_node = 2;
  options.report_limits.max_traits_per_device = 3;
  RecordingStore small_store;
  Inventory small(options, &small_store);
  absl::Status s =
      small.Report(Node("n1", {HostCpu(), Gpu(0, "a"), Gpu(1, "b")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("at most 2 (--max_devices_per_node)"));
  Device many = Gpu(0, "nvptx");  // kind {gpu, nohost} + arch + 2 isa = 5
  many.traits.isa = {"sm_80", "sm_90"};
  s = small.Report(Node("n1", {many}));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("node.devices[0].traits: more than 3"));
  Device huge = Gpu(0, std::string(1 << 20, 'x'));  // a megabyte of arch
  s = inventory_.Report(Node("n1", {huge}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node.devices[0].traits.arch"));
  EXPECT_TRUE(small.Report(Node("n1", {HostCpu(), Gpu(0, "a")})).ok());
}

TEST_F(InventoryTest, BeatsFindDevicesAfterReReports) {
  ASSERT_TRUE(
      inventory_.Report(Node("n1", {HostCpu(), Gpu(0, "a"), Gpu(1, "b")}))
          .ok());
  // The same ids at other positions: the beat must land on each device.
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(1, "b"), Gpu(0, "a")})).ok());
  ASSERT_EQ(*inventory_.Heartbeat("n1", {{"n1/gpu1", 0.75}, {"n1/gpu0", 0.25}}),
            Inventory::BeatAnswer::kRecorded);
  auto page = inventory_.ListDevices(Filter(""), "n1", 0, "");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].id, "n1/gpu0");
  EXPECT_EQ(page->items[0].properties.utilisation, 0.25);
  EXPECT_EQ(page->items[1].properties.utilisation, 0.75);
  EXPECT_EQ(*inventory_.Heartbeat("n1", {{"n1/cpu0", 0.5}}),
            Inventory::BeatAnswer::kUnknownDevice);
}

TEST_F(InventoryTest, EventHistoryIsBoundedByBytesAndSharesSnapshots) {
  InventoryOptions options;
  options.event_history_bytes = 256 << 10;  // ~3 snapshots of 200 devices
  RecordingStore store;
  Inventory inventory(options, &store);
  std::vector<Device> devices;
  for (int i = 0; i < 200; ++i)
    devices.push_back(Gpu(i, "arch" + std::to_string(i)));
  for (int n = 0; n < 20; ++n) {
    ASSERT_TRUE(inventory.Report(Node("n" + std::to_string(n), devices)).ok());
  }
  int64_t latest = 0;
  inventory.Nodes(&latest);
  // 20 snapshots of 200 devices do not fit in 256 KiB: the oldest are gone.
  EXPECT_EQ(inventory.EventsAfter(0, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kOutOfRange);
  auto last = inventory.EventsAfter(latest - 1, absl::ZeroDuration());
  ASSERT_TRUE(last.ok()) << last.status();
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ(last->front().node->devices.size(), 200u);

  ASSERT_TRUE(inventory.Deregister("n19").ok());
  auto removal = inventory.EventsAfter(latest - 1, absl::ZeroDuration());
  ASSERT_TRUE(removal.ok()) << removal.status();
  ASSERT_EQ(removal->size(), 2u);
  EXPECT_EQ((*removal)[1].kind, InventoryEvent::Kind::kRemoved);
  // The removal points at the report's snapshot instead of a copy.
  EXPECT_EQ((*removal)[1].node.get(), (*removal)[0].node.get());

  // n0's report left the history long ago: its removal carries a copy.
  ASSERT_TRUE(inventory.Deregister("n0").ok());
  inventory.Nodes(&latest);
  auto old_removal = inventory.EventsAfter(latest - 1, absl::ZeroDuration());
  ASSERT_TRUE(old_removal.ok()) << old_removal.status();
  ASSERT_EQ(old_removal->size(), 1u);
  EXPECT_EQ(old_removal->front().node->id, "n0");
  EXPECT_EQ(old_removal->front().node->devices.size(), 200u);
}

TEST_F(InventoryTest, OverdueNodesAreSuspectUntilTheyBeat) {
  InventoryOptions options;
  options.ttl = absl::Seconds(3);
  options.suspect_after = absl::Seconds(2);
  options.now = [this] { return now_; };
  Inventory inventory(options, &store_);
  ASSERT_TRUE(inventory.Report(Node("n1", {Gpu(0, "a")})).ok());
  now_ += absl::Milliseconds(1500);
  inventory.MarkSuspects();
  EXPECT_EQ(store_.suspect.count("n1"), 0u);
  now_ += absl::Milliseconds(1000);
  inventory.MarkSuspects();
  EXPECT_TRUE(store_.suspect["n1"]);
  auto nodes = inventory.ListNodes(0, "");
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE(nodes->items[0].suspect);
  ASSERT_EQ(*inventory.Heartbeat("n1", {}), Inventory::BeatAnswer::kRecorded);
  EXPECT_FALSE(store_.suspect["n1"]);
  nodes = inventory.ListNodes(0, "");
  EXPECT_FALSE(nodes->items[0].suspect);
}

TEST_F(InventoryTest, WatchersAreWokenOffTheWritersThread) {
  absl::Notification woken;
  std::thread::id waker;
  auto id = inventory_.NotifyAfter(0, [&] {
    waker = std::this_thread::get_id();
    woken.Notify();
  });
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(inventory_.Report(Node("n1", {Gpu(0, "a")})).ok());
  ASSERT_TRUE(woken.WaitForNotificationWithTimeout(absl::Seconds(30)));
  // The reporting thread only queued the wake; a watcher's work (reading
  // and encoding events) never lengthens the report.
  EXPECT_NE(waker, std::this_thread::get_id());
}

}  // namespace
}  // namespace ctxsel::server
