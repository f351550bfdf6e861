// Lock order and change ordering of the Inventory: a slow device store (the
// placer rebuilding) must not stall heartbeats or listings, and must see
// every node's changes in the order the inventory applies them.
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/fleet/inventory.h"
#include "server/placement/placer_bridge.h"
#include "server/placement/placer_test_util.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;

// The real device store (placement's Fleet through PlacerBridge), thread
// safe, logging what it is asked; can hold ReplaceNodeDevices until
// released, as a slow placement rebuild would.
class GateStore : public DeviceStore {
 public:
  absl::Status ReplaceNodeDevices(const std::string& node,
                                  const std::vector<Device>& devices) override {
    if (hold_.load()) {
      entered_.Notify();
      release_.WaitForNotification();
    }
    absl::Status s = bridge_.ReplaceNodeDevices(node, devices);
    absl::MutexLock lock(&mu_);
    log_.push_back("report " + node);
    return s;
  }
  void RemoveNodeDevices(const std::string& node) override {
    bridge_.RemoveNodeDevices(node);
    absl::MutexLock lock(&mu_);
    log_.push_back("remove " + node);
  }
  bool RecordBeat(const std::string& node,
                  absl::Span<const DeviceBeat> beat) override {
    std::string line = "beat " + node + ":";
    for (const auto& [id, u] : beat) line += " " + id + "=" + std::to_string(u);
    const bool recorded = bridge_.RecordBeat(node, beat);
    absl::MutexLock lock(&mu_);
    log_.push_back(line);
    return recorded;
  }
  void SetNodeSuspect(const std::string& node, bool suspect) override {
    bridge_.SetNodeSuspect(node, suspect);
  }
  std::vector<Device> NodeDevices(const std::string& node) const override {
    if (hold_listing_.load()) {
      hold_listing_ = false;  // the first call only
      listing_entered_.Notify();
      listing_release_.WaitForNotification();
    }
    return bridge_.NodeDevices(node);
  }

  std::atomic<bool> hold_{false};
  // Holds the next NodeDevices (a listing reading the fleet) until released.
  mutable std::atomic<bool> hold_listing_{false};
  mutable absl::Notification listing_entered_;
  absl::Notification listing_release_;
  absl::Notification entered_;
  absl::Notification release_;

  std::vector<std::string> log() {
    absl::MutexLock lock(&mu_);
    return log_;
  }

 private:
  placement::Placer placer_;
  PlacerBridge bridge_{&placer_};
  absl::Mutex mu_;
  std::vector<std::string> log_;
};

NodeState GpuNode(const std::string& id, int gpus) {
  NodeState node;
  node.id = id;
  for (int i = 0; i < gpus; ++i) {
    Device d;
    d.index = i;
    d.traits.kind = {"gpu", "nohost"};
    d.traits.arch = {"nvptx"};
    node.devices.push_back(d);
  }
  return node;
}

// Runs `call` on another thread; false if it has not returned in 10 s (it
// is blocked on a lock it should not need).
template <typename F>
bool ReturnsPromptly(F call) {
  auto done = std::async(std::launch::async, call);
  return done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
}

TEST(InventoryConcurrencyTest, SlowStoreDoesNotStallBeatsOrListings) {
  GateStore observer;
  Inventory inventory({}, &observer);
  ASSERT_TRUE(inventory.Report(GpuNode("a", 1)).ok());
  observer.hold_ = true;
  std::thread reporter(
      [&] { EXPECT_TRUE(inventory.Report(GpuNode("b", 2)).ok()); });
  observer.entered_.WaitForNotification();

  EXPECT_TRUE(ReturnsPromptly([&] {
    EXPECT_EQ(*inventory.Heartbeat("a", {{"a/gpu0", 0.5}}),
              Inventory::BeatAnswer::kRecorded);
    EXPECT_EQ(inventory.ListNodes(0, "")->items.size(), 1u);
    EXPECT_EQ(inventory.ListDevices(DeviceFilter(), "", 0, "")->items.size(),
              1u);
  }));
  observer.release_.Notify();
  reporter.join();
  EXPECT_EQ(inventory.ListNodes(0, "")->items.size(), 2u);
}

// A listing reads the fleet node by node without holding the inventory's
// lock, so a long filtered listing never stalls the agents' heartbeats
// (which take that lock exclusively).
TEST(InventoryConcurrencyTest, ListingDoesNotStallHeartbeats) {
  GateStore store;
  Inventory inventory({}, &store);
  ASSERT_TRUE(inventory.Report(GpuNode("a", 1)).ok());
  ASSERT_TRUE(inventory.Report(GpuNode("b", 1)).ok());
  store.hold_listing_ = true;
  std::thread listing([&] {
    absl::StatusOr<Page<Device>> page =
        inventory.ListDevices(DeviceFilter(), "", 0, "");
    ASSERT_TRUE(page.ok());
    EXPECT_EQ(page->items.size(), 2u);
  });
  store.listing_entered_.WaitForNotification();

  absl::Notification beat_done;
  std::thread beat([&] {
    EXPECT_EQ(*inventory.Heartbeat("b", {{"b/gpu0", 0.5}}),
              Inventory::BeatAnswer::kRecorded);
    beat_done.Notify();
  });
  EXPECT_TRUE(beat_done.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "a heartbeat waited for a listing";
  store.listing_release_.Notify();
  beat.join();
  listing.join();
}

// Placement's store (listings read its published records), whose
// SetNodeSuspect can be held: the inventory calls it from MarkSuspects with
// its state lock held exclusively, as a heartbeat holds it.
class SuspectGateStore : public DeviceStore {
 public:
  absl::Status ReplaceNodeDevices(const std::string& node,
                                  const std::vector<Device>& devices) override {
    return bridge_.ReplaceNodeDevices(node, devices);
  }
  void RemoveNodeDevices(const std::string& node) override {
    bridge_.RemoveNodeDevices(node);
  }
  bool RecordBeat(const std::string& node,
                  absl::Span<const DeviceBeat> beat) override {
    return bridge_.RecordBeat(node, beat);
  }
  void SetNodeSuspect(const std::string& node, bool suspect) override {
    if (hold_.exchange(false)) {
      entered_.Notify();
      release_.WaitForNotification();
    }
    bridge_.SetNodeSuspect(node, suspect);
  }
  std::vector<Device> NodeDevices(const std::string& node) const override {
    return bridge_.NodeDevices(node);
  }
  void ScanDevices(absl::Span<const std::string> nodes,
                   DeviceScan* scan) const override {
    bridge_.ScanDevices(nodes, scan);
  }

  placement::Placer placer;
  std::atomic<bool> hold_{false};
  absl::Notification entered_;
  absl::Notification release_;

 private:
  PlacerBridge bridge_{&placer};
};

// Holds the fleet's lock shared (a claiming Select asks about room with it
// held) until released.
class HeldClaimCheck : public placement::ClaimCheck {
 public:
  bool HasRoom(const std::string& device_id,
               const DeviceProperties& device) const override {
    if (!entered_.HasBeenNotified()) entered_.Notify();
    release_.WaitForNotification();
    return true;
  }
  mutable absl::Notification entered_;
  absl::Notification release_;
};

// A listing takes neither lock that a heartbeat takes exclusively: it goes
// on while the inventory's state lock is held exclusively (MarkSuspects
// calling a slow store), and while a beat waits for the fleet's lock (held
// shared by a claiming Select), where a reader of that lock would queue
// behind the beat.
TEST(InventoryConcurrencyTest, ListingTakesNoLockABeatTakes) {
  absl::Time now = absl::Now();
  SuspectGateStore store;
  ASSERT_TRUE(
      store.placer.SetVariants("saxpy", placement::testing::SaxpyVariants())
          .ok());
  Inventory inventory(
      {.suspect_after = absl::Seconds(1), .now = [&now] { return now; }},
      &store);
  for (const char* node : {"a", "b", "c"}) {
    ASSERT_TRUE(inventory.Report(GpuNode(node, 2)).ok());
  }
  const DeviceFilter gpus = *DeviceFilter::Parse("device={arch(nvptx)}", "f");
  auto list = [&] {
    absl::StatusOr<Page<Device>> page = inventory.ListDevices(gpus, "", 0, "");
    EXPECT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(page.ok() ? page->items.size() : 0u, 6u);
  };
  list();  // the node list is published once the nodes have joined
  // Whether a listing ends within 10 s while something is held; `release`
  // then lets that go, either way.
  auto lists_promptly = [&list](absl::Notification& release) {
    absl::Notification done;
    std::thread listing([&] {
      list();
      done.Notify();
    });
    const bool prompt = done.WaitForNotificationWithTimeout(absl::Seconds(10));
    release.Notify();
    listing.join();
    return prompt;
  };

  // The inventory's state lock, held exclusively.
  now += absl::Seconds(2);
  store.hold_ = true;
  std::thread suspects([&] { inventory.MarkSuspects(); });
  store.entered_.WaitForNotification();
  EXPECT_TRUE(lists_promptly(store.release_))
      << "a listing waited for the inventory's state lock";
  suspects.join();

  // A beat waiting for the fleet's lock.
  HeldClaimCheck claims;
  std::thread select([&] {
    EXPECT_TRUE(
        store.placer.Select(placement::testing::SaxpyJob(), &claims).ok());
  });
  claims.entered_.WaitForNotification();
  std::thread beat([&] {
    EXPECT_EQ(*inventory.Heartbeat("b", {{"b/gpu0", 0.5}}),
              Inventory::BeatAnswer::kRecorded);
  });
  // Time for the beat to queue for the lock (if it has not yet, the
  // listing below is not behind it and this part tests nothing more).
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(lists_promptly(claims.release_))
      << "a listing waited behind a beat for the fleet's lock";
  select.join();
  beat.join();
  // The beat is listed whole once it is recorded.
  auto b = inventory.ListDevices(DeviceFilter(), "b", 0, "");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->items[0].properties.utilisation, 0.5);
}

TEST(InventoryConcurrencyTest, BeatDuringItsNodesReportIsToldAfterIt) {
  GateStore observer;
  Inventory inventory({}, &observer);
  ASSERT_TRUE(inventory.Report(GpuNode("n", 1)).ok());
  observer.hold_ = true;
  std::thread reporter(
      [&] { EXPECT_TRUE(inventory.Report(GpuNode("n", 2)).ok()); });
  observer.entered_.WaitForNotification();
  // The agent already beats for the devices it is reporting.
  EXPECT_EQ(*inventory.Heartbeat("n", {{"n/gpu1", 0.25}}),
            Inventory::BeatAnswer::kRecorded);
  EXPECT_EQ(*inventory.Heartbeat("n", {{"n/gpu7", 0.25}}),
            Inventory::BeatAnswer::kUnknownDevice);
  EXPECT_EQ(*inventory.Heartbeat("n", {{"n/gpu0", 0.5}}),
            Inventory::BeatAnswer::kRecorded);
  observer.release_.Notify();
  reporter.join();
  // The beats that waited for the report reach the store in one batch.
  EXPECT_THAT(observer.log(),
              ElementsAre("report n", "report n",
                          "beat n: n/gpu1=0.250000 n/gpu0=0.500000"));
  auto devices = inventory.ListDevices(DeviceFilter(), "n", 0, "");
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->items.size(), 2u);
  EXPECT_EQ(devices->items[1].properties.utilisation, 0.25);
}

// Every node the inventory lists has the devices it last reported in the
// store, and the store has no others.
TEST(InventoryConcurrencyTest, StoreEndsInTheInventorysState) {
  GateStore store;
  Inventory inventory({}, &store);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&inventory, t] {
      std::mt19937 random(t);
      for (int i = 0; i < 300; ++i) {
        const std::string node = "n" + std::to_string(random() % 3);
        if (random() % 4 == 0) {
          inventory.Deregister(node).IgnoreError();  // may be gone already
        } else {
          EXPECT_TRUE(inventory.Report(GpuNode(node, 1 + random() % 4)).ok());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  int64_t sequence = 0;
  std::map<std::string, size_t> listed;
  for (const NodeState& node : inventory.Nodes(&sequence)) {
    listed[node.id] = node.devices.size();
  }
  // The last event of each node says what it last reported (or that it
  // left); the store must hold exactly that.
  auto events = inventory.EventsAfter(0, absl::ZeroDuration());
  ASSERT_TRUE(events.ok()) << events.status();
  std::map<std::string, size_t> last_reported;
  for (const InventoryEvent& e : *events) {
    if (e.kind == InventoryEvent::Kind::kRemoved) {
      last_reported.erase(e.node->id);
    } else {
      last_reported[e.node->id] = e.node->devices.size();
    }
  }
  EXPECT_EQ(listed, last_reported);
  for (const char* node : {"n0", "n1", "n2"}) {
    EXPECT_EQ(store.NodeDevices(node).size(),
              last_reported.count(node) ? last_reported[node] : 0u)
        << node;
  }
}

// Counts wakes, which run on the inventory's notifier thread.
class WakeCounter {
 public:
  std::function<void()> Wake() {
    return [this] {
      absl::MutexLock lock(&mu_);
      ++count_;
    };
  }
  // Waits until `n` wakes have run, then a little longer to see that no
  // more come; returns the count.
  int AfterAtLeast(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return count_ >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(30));
    auto over = [this, n]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return count_ > n; };
    mu_.AwaitWithTimeout(absl::Condition(&over), absl::Milliseconds(50));
    return count_;
  }

 private:
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(InventoryConcurrencyTest, NotifyAfterWakesOnceOnTheNextChange) {
  GateStore store;
  Inventory inventory({}, &store);
  int64_t cursor = -1;
  inventory.Nodes(&cursor);
  WakeCounter wakes;
  const std::optional<int64_t> id = inventory.NotifyAfter(cursor, wakes.Wake());
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(inventory.Report(GpuNode("n", 1)).ok());
  EXPECT_EQ(wakes.AfterAtLeast(1), 1);
  // A report that changes nothing records no event and wakes nobody.
  const std::optional<int64_t> again =
      inventory.NotifyAfter(cursor + 1, wakes.Wake());
  ASSERT_TRUE(again.has_value());
  ASSERT_TRUE(inventory.Report(GpuNode("n", 1)).ok());
  EXPECT_EQ(wakes.AfterAtLeast(1), 1);
  ASSERT_TRUE(inventory.Deregister("n").ok());
  EXPECT_EQ(wakes.AfterAtLeast(2), 2);
  // Behind the latest event: read, do not wait.
  EXPECT_FALSE(inventory.NotifyAfter(cursor, wakes.Wake()));
  // A cancelled wake is never called.
  const std::optional<int64_t> cancelled =
      inventory.NotifyAfter(cursor + 2, wakes.Wake());
  ASSERT_TRUE(cancelled.has_value());
  inventory.CancelNotify(*cancelled);
  ASSERT_TRUE(inventory.Report(GpuNode("n", 1)).ok());
  EXPECT_EQ(wakes.AfterAtLeast(2), 2);
}

}  // namespace
}  // namespace ctxsel::server
