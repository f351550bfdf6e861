#include "client/inventory_watch.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::client {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Kind = v1::InventoryEvent::Kind;

// An event from the server: `node` with one device of `arch`.
v1::InventoryEvent Event(Kind kind, const std::string& node,
                         const std::string& arch, int64_t sequence,
                         const std::string& epoch) {
  v1::InventoryEvent event;
  event.set_kind(kind);
  if (!node.empty()) {
    event.mutable_node()->set_id(node);
    v1::Device* device = event.mutable_node()->add_devices();
    device->set_id(node + "/gpu0");
    device->mutable_traits()->add_arch(arch);
  }
  event.set_sequence(sequence);
  event.set_stream_epoch(epoch);
  return event;
}

// "KIND node (reason) @sequence" for each event the caller gets.
std::vector<std::string> Feed(WatchedInventory& watched,
                              const std::vector<v1::InventoryEvent>& events) {
  std::vector<std::string> out;
  for (const v1::InventoryEvent& event : events) {
    for (const v1::InventoryEvent& e : watched.Take(event)) {
      out.push_back(v1::InventoryEvent::Kind_Name(e.kind()) + " " +
                    e.node().id() + " (" + e.reason() + ") @" +
                    std::to_string(e.sequence()));
    }
  }
  return out;
}

TEST(WatchedInventoryTest, InitialIsAResyncSnapshotReadAsAdded) {
  WatchedInventory watched(/*initial=*/true);
  const v1::WatchInventoryRequest first = watched.NextRequest();
  EXPECT_TRUE(first.resync());
  EXPECT_EQ(first.resume_epoch(), "");
  EXPECT_THAT(
      Feed(watched, {Event(v1::InventoryEvent::KIND_RESYNC, "n1", "a", 5, "A"),
                     Event(v1::InventoryEvent::KIND_RESYNC_END, "", "", 5, "A"),
                     Event(v1::InventoryEvent::KIND_ADDED, "n2", "a", 6, "A")}),
      ElementsAre("KIND_ADDED n1 (initial) @5", "KIND_ADDED n2 () @6"));
  const v1::WatchInventoryRequest next = watched.NextRequest();
  EXPECT_FALSE(next.resync());
  EXPECT_EQ(next.resume_after(), 6);
  EXPECT_EQ(next.resume_epoch(), "A");
}

TEST(WatchedInventoryTest, AResyncGivesOnlyTheDifferences) {
  WatchedInventory watched(/*initial=*/false);
  EXPECT_FALSE(watched.NextRequest().resync());  // a plain watch starts plain
  Feed(watched, {Event(v1::InventoryEvent::KIND_ADDED, "kept", "a", 1, "A"),
                 Event(v1::InventoryEvent::KIND_ADDED, "changed", "a", 2, "A"),
                 Event(v1::InventoryEvent::KIND_ADDED, "gone", "a", 3, "A")});
  // Failover to replica B, which numbers its own events.
  const v1::WatchInventoryRequest resume = watched.NextRequest();
  EXPECT_EQ(resume.resume_after(), 3);
  EXPECT_EQ(resume.resume_epoch(), "A");
  v1::InventoryEvent kept =
      Event(v1::InventoryEvent::KIND_RESYNC, "kept", "a", 40, "B");
  kept.mutable_node()->mutable_devices(0)->set_utilisation(0.5);  // no change
  EXPECT_THAT(
      Feed(watched,
           {kept,
            Event(v1::InventoryEvent::KIND_RESYNC, "changed", "b", 40, "B"),
            Event(v1::InventoryEvent::KIND_RESYNC, "new", "a", 40, "B"),
            Event(v1::InventoryEvent::KIND_RESYNC_END, "", "", 40, "B"),
            Event(v1::InventoryEvent::KIND_REMOVED, "new", "a", 41, "B")}),
      ElementsAre("KIND_CHANGED changed (resync) @40",
                  "KIND_ADDED new (resync) @40",
                  "KIND_REMOVED gone (resync) @40", "KIND_REMOVED new () @41"));
  const v1::WatchInventoryRequest next = watched.NextRequest();
  EXPECT_EQ(next.resume_after(), 41);
  EXPECT_EQ(next.resume_epoch(), "B");
}

TEST(WatchedInventoryTest, ASnapshotCutShortIsNotAPosition) {
  WatchedInventory watched(/*initial=*/true);
  watched.NextRequest();
  // The initial snapshot breaks after one node: no position yet.
  EXPECT_THAT(Feed(watched,
                   {Event(v1::InventoryEvent::KIND_RESYNC, "n1", "a", 5, "A")}),
              ElementsAre("KIND_ADDED n1 (initial) @5"));
  const v1::WatchInventoryRequest again = watched.NextRequest();
  EXPECT_TRUE(again.resync());
  // n1 is not repeated; n2 is new; the snapshot is still the first.
  EXPECT_THAT(
      Feed(watched,
           {Event(v1::InventoryEvent::KIND_RESYNC, "n1", "a", 7, "C"),
            Event(v1::InventoryEvent::KIND_RESYNC, "n2", "a", 7, "C"),
            Event(v1::InventoryEvent::KIND_RESYNC_END, "", "", 7, "C")}),
      ElementsAre("KIND_ADDED n2 (initial) @7"));
}

TEST(WatchedInventoryTest, AReplayDoesNotRepeatWhatASnapshotDelivered) {
  WatchedInventory watched(/*initial=*/false);
  watched.NextRequest();
  Feed(watched, {Event(v1::InventoryEvent::KIND_ADDED, "n1", "a", 1, "A")});
  watched.NextRequest();  // resumes after 1 of A, lands on B: a resync...
  EXPECT_THAT(Feed(watched,
                   {Event(v1::InventoryEvent::KIND_RESYNC, "n1", "b", 9, "B")}),
              ElementsAre("KIND_CHANGED n1 (resync) @9"));
  // ... cut short; A answers again and replays its event 2, the same change.
  EXPECT_EQ(watched.NextRequest().resume_epoch(), "A");
  EXPECT_THAT(Feed(watched, {Event(v1::InventoryEvent::KIND_CHANGED, "n1", "b",
                                   2, "A")}),
              IsEmpty());
}

TEST(WatchedInventoryTest, APlainWatchThatSawNothingResyncs) {
  WatchedInventory watched(/*initial=*/false);
  watched.NextRequest();
  EXPECT_TRUE(watched.NextRequest().resync());
}

}  // namespace
}  // namespace ctxsel::client
