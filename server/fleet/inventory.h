// inventory.h: the fleet as node agents report it — soft state.
//
// Agents send a full report when they connect (Report) and then heartbeats
// with utilisation (Heartbeat). A node whose last beat is older than the TTL
// is removed with its devices by ExpireStale(), which the server calls
// periodically. Nothing is persisted: after a restart the inventory is empty
// and a beat from a node it does not know answers kUnknownNode, which tells
// the agent to report again.
//
// Device state lives in one place, the DeviceStore (placement's Fleet,
// through PlacerBridge): the inventory keeps each node's liveness (last
// beat, suspect, TTL), the event history for watchers and the listings,
// which read devices and their utilisation from the store. A report is
// checked once (NormalizeReport), a beat once (CheckBeat). A watcher starts
// (StartWatch: fresh, or resuming after an event it saw), then either polls
// (EventsAfter) or asks to be woken (NotifyAfter) — the latter needs no
// thread per watcher. Sequences are numbered per inventory: its epoch()
// names that numbering, so a watcher resuming on another replica or after a
// restart is told to resync instead of being handed someone else's numbers. An
// InventoryObserver (optional) hears of each report, removal and beat, e.g. to
// mirror node leases elsewhere.
//
//   placement::Placer placer;
//   PlacerBridge bridge(&placer);  // the DeviceStore
//   Inventory inventory({.ttl = absl::Seconds(3)}, &bridge);
//   NodeState node{.id = "n1", .devices = {...}};
//   absl::Status s = inventory.Report(std::move(node));
//   inventory.Heartbeat("n1", {{"n1/0", 0.4}});  // kRecorded
//
// Thread safety: every method may be called from any thread. Lock order:
// changes to the set of devices (Report, Deregister, ExpireStale) are
// sequenced by `apply_mu_`, which they hold while they call the store and
// the observer; the state lock `mu_` that heartbeats and watchers take is
// held to check and to commit. A heartbeat holds `mu_`
// only to find its node and mark it alive, then records utilisation in the
// store with no inventory lock held: one lock at a time. The store's lock
// may be taken under `mu_` (events, suspect marks), never the other way
// round. ListDevices takes no lock a heartbeat takes: it pages over the
// live nodes' names as last published (NodeNames(): rebuilt under a shared
// hold of `mu_` only after a node joined or left, which no beat does) and
// reads their devices from the store's published records (placement's
// node_listing.h): listings and beats never wait for each other, and the
// listers' lock traffic lands on locks no beat takes. Wake callbacks run on the
// inventory's own notifier thread with no inventory lock held.
#ifndef CTXSEL_SERVER_FLEET_INVENTORY_H_
#define CTXSEL_SERVER_FLEET_INVENTORY_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/fleet/device_filter.h"
#include "server/fleet/node_report.h"
#include "server/model/model.h"
#include "server/model/page_budget.h"

namespace ctxsel::server {

// Where device state lives: every live device with its utilisation.
// Implemented by PlacerBridge over placement's Fleet; the inventory keeps no
// copy of it. Calls for one node come in the order the inventory applies
// its changes.
class DeviceStore {
 public:
  virtual ~DeviceStore() = default;
  // Makes `devices` (a report NormalizeReport accepted) all of `node`'s.
  // AlreadyExistsError "node.devices[1].id: 'x' belongs to node 'y'" when a
  // device id is another node's; nothing changes then.
  virtual absl::Status ReplaceNodeDevices(
      const std::string& node, const std::vector<Device>& devices) = 0;
  // Removes `node`'s devices; no-op for an unknown node.
  virtual void RemoveNodeDevices(const std::string& node) = 0;
  // Records a beat of `node` (values CheckBeat accepted); a later pair for
  // the same device wins. False, and nothing recorded, when a device is
  // not one of `node`'s.
  virtual bool RecordBeat(const std::string& node,
                          absl::Span<const DeviceBeat> beat) = 0;
  // `node` became suspect (its heartbeat is overdue) or healthy again.
  virtual void SetNodeSuspect(const std::string& node, bool suspect) = 0;
  // `node`'s devices as they are now, by index; empty for an unknown node.
  virtual std::vector<Device> NodeDevices(const std::string& node) const = 0;
  // One step of a ListDevices: reads `nodes` as `scan` says (DeviceScan's
  // rule) and leaves in it the devices that pass its filter. This default
  // copies each node's devices (NodeDevices) and matches every one;
  // PlacerBridge reads the nodes' published records (no lock a beat takes),
  // matches once per device class and layout, and copies only the devices
  // that pass.
  virtual void ScanDevices(absl::Span<const std::string> nodes,
                           DeviceScan* scan) const;
};

// Hears about nodes, e.g. to mirror them elsewhere. Every method runs with
// no inventory state lock held; NodeReported and NodeRemoved are told one
// at a time, in the order the inventory applied them (under its sequencing
// lock: they may be slow, but they delay the next report or removal).
// NodeBeat runs on the heartbeat's own thread and must be cheap.
class InventoryObserver {
 public:
  virtual ~InventoryObserver() = default;
  // A report of `node` was taken (its devices are in the store).
  virtual void NodeReported(const NodeState& node) = 0;
  // `node` left the inventory: `reason` as its kRemoved event says
  // ("deregistered", "expired ...").
  virtual void NodeRemoved(const std::string& node,
                           const std::string& reason) = 0;
  // A beat of `node` was recorded: the node is alive.
  virtual void NodeBeat(const std::string& node) = 0;
};

struct InventoryEvent {
  // kResync and kResyncEnd only appear in a watch's resync snapshot
  // (StartWatch), never in the history.
  enum class Kind { kAdded, kChanged, kRemoved, kResync, kResyncEnd };
  Kind kind = Kind::kAdded;
  // The node as of the event (for kRemoved: as it was last reported; null
  // for kResyncEnd). Shared: every watcher reading the event points at one
  // snapshot, and a removal points at its node's last report's while the
  // history holds it.
  std::shared_ptr<const NodeState> node;
  std::string reason;    // "reported", "deregistered", "expired ..."
  int64_t sequence = 0;  // 1, 2, ... since the inventory was created
  absl::Time time;
};

struct InventoryOptions {
  absl::Duration ttl = absl::Seconds(3);
  // A node with no beat for this long is suspect (placement avoids it while
  // healthy devices can serve; listings and Explain say so). Infinite: never.
  absl::Duration suspect_after = absl::InfiniteDuration();
  // Events kept for watchers that are behind: at most this many, holding
  // node snapshots of at most this many bytes (estimated) together.
  size_t event_history = 4096;
  size_t event_history_bytes = 64 << 20;
  ReportLimits report_limits;
  int default_page_size = 500;
  int max_page_size = 5000;
  // ListDevices pages read at once; the rest wait their turn. A filtered
  // page may read every device of the fleet: unbounded, concurrent listings
  // take every core and delay heartbeats by scheduling alone. 0: half the
  // cores, at least 1.
  int max_concurrent_listings = 0;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// Where a watch starts (WatchInventoryRequest's fields of the same names).
struct WatchFrom {
  bool initial = false;  // fresh watch: the live nodes as kAdded first
  // Resuming (resume_epoch not empty): after this event of that epoch.
  int64_t resume_after = 0;
  std::string resume_epoch;
  bool resync = false;  // a resync snapshot first, whatever the above say
};

// What a watcher sends first, then the events after `sequence`.
struct WatchStart {
  std::vector<InventoryEvent> events;
  int64_t sequence = 0;
  bool resync = false;  // `events` is a resync snapshot
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;  // empty on the last page
};

class Inventory {
 public:
  // `devices` (required) and `observer` (may be null) must outlive the
  // inventory.
  Inventory(InventoryOptions options, DeviceStore* devices,
            InventoryObserver* observer = nullptr);

  ~Inventory();

  // Takes a full report, checked by NormalizeReport (once).
  // InvalidArgumentError for a bad report, ResourceExhaustedError over
  // options().report_limits, AlreadyExistsError when a device id belongs to
  // another node (the store's check). O(devices x log n).
  absl::Status Report(NodeState node);

  enum class BeatAnswer { kRecorded, kUnknownNode, kUnknownDevice };
  // Records a beat in O(beats x log n), whatever the node's size.
  // InvalidArgumentError for utilisation outside [0, 1] (CheckBeat). A
  // beat of a known node keeps it alive even when it names a device the
  // node did not report (kUnknownDevice asks for a new report).
  absl::StatusOr<BeatAnswer> Heartbeat(
      const std::string& node, absl::Span<const DeviceBeat> utilisation);

  // Removes a node now. InvalidArgumentError for an empty id, NotFoundError
  // (with ResourceInfo) if unknown.
  absl::Status Deregister(const std::string& node);

  // Records a kChanged event "`reason`" for each of `nodes` still live, its
  // devices as the store has them now: a change of their condition that
  // no report made (an operator's cordon).
  void NodesChanged(const std::vector<std::string>& nodes,
                    const std::string& reason);

  // Removes every node with no beat for the TTL; returns their ids.
  std::vector<std::string> ExpireStale();

  // Counts every live node as heard from now, as a beat would (a suspect
  // mark stays until its next beat). For a replica back in step with its
  // store: while stale it refused its agents' beats, so their silence was
  // its own doing and must not expire their nodes the moment it is fresh;
  // from now on each has a TTL to beat again, here or at another replica.
  void ResetSilence();

  // Marks nodes whose beat is overdue (options().suspect_after) as suspect
  // in the store; a node's next beat or report makes it healthy.
  void MarkSuspects();

  // Live nodes in id order, from `page_token` on; a page ends at
  // `page_size` nodes or before `budget` runs out. ResourceExhaustedError
  // naming a node too large for a page on its own; InvalidArgumentError for
  // a page token that is not from a ListNodes page (page_token.h).
  absl::StatusOr<Page<NodeState>> ListNodes(
      int page_size, const std::string& page_token,
      PageBudget<NodeState> budget = {}) const;

  // Live devices in (node, index) order that pass `device_filter`
  // (device_filter.h) and are on `node` (empty: any). InvalidArgumentError
  // for a page token from another listing or another filter or `node`.
  // Pages end as ListNodes' do. `interrupted` (when given) is asked every
  // few devices; once it returns an error (the call's DEADLINE_EXCEEDED or
  // CANCELLED, server/rpc/call_interrupt.h) the listing stops with that error.
  // Not a snapshot: a node reported or removed while a page is read may be
  // in it or not, as across pages. Takes no lock a heartbeat takes, but a
  // shared hold of the state lock on the first page after a node joined or
  // left (see the file comment).
  absl::StatusOr<Page<Device>> ListDevices(
      const DeviceFilter& device_filter, const std::string& node, int page_size,
      const std::string& page_token, PageBudget<Device> budget = {},
      const std::function<absl::Status()>& interrupted = nullptr) const;

  // Every live node and the sequence of the latest event, atomically.
  std::vector<NodeState> Nodes(int64_t* sequence) const;

  // The one place that decides how a watch starts, atomically with the
  // events it will read next:
  //   * fresh (`resume_epoch` empty): the live nodes as kAdded "initial"
  //     events when `initial`, else nothing;
  //   * resuming with this epoch() while the history holds every event
  //     after `resume_after`: those events (none when it is the latest);
  //   * resuming otherwise (another epoch, history trimmed), or `resync`:
  //     a resync snapshot, every live node as kResync then one kResyncEnd.
  // Snapshot events carry the latest sequence, which is also `sequence`,
  // and share each node's snapshot with the other watches that start before
  // the node changes (a beat, report or mark changes it): a watch holds a
  // pointer per node, not a copy of the fleet. InvalidArgumentError (BadRequest
  // naming the field) for a negative resume_after, one past the latest event of
  // this epoch, or a resume_after without resume_epoch.
  absl::StatusOr<WatchStart> StartWatch(const WatchFrom& from) const;

  // Names this inventory's sequence numbering: random, one per inventory
  // (so per server process).
  const std::string& epoch() const { return epoch_; }

  // Events with sequence > `after`, waiting up to `timeout` for the first;
  // only the first ones whose snapshots hold at most `max_bytes` together
  // (estimated as the history's bound is; always at least one), so that a
  // reader takes the history a bounded part at a time. OutOfRangeError when
  // some of them were already dropped from history.
  absl::StatusOr<std::vector<InventoryEvent>> EventsAfter(
      int64_t after, absl::Duration timeout,
      size_t max_bytes = std::numeric_limits<size_t>::max()) const;

  // Asks for `wake` to be called once, on the inventory's notifier thread,
  // after the next event is recorded, if no event after `after` exists yet;
  // returns an id for CancelNotify. Returns nullopt and never calls `wake`
  // when such events exist already (read them with EventsAfter). The
  // thread that records an event only hands the wakes over, so a change
  // costs its writer the same with 0 or 1,000 watchers. `wake` runs with no
  // inventory lock held and must not block; it may still run after
  // CancelNotify if the event was being recorded at that moment.
  std::optional<int64_t> NotifyAfter(int64_t after,
                                     std::function<void()> wake) const;

  // Forgets a wake that has not been called (no-op otherwise).
  void CancelNotify(int64_t id) const;

  const InventoryOptions& options() const { return options_; }

 private:
  using Wakes = std::vector<std::function<void()>>;
  // What the inventory keeps of a node; its devices are in the store.
  struct NodeEntry {
    std::string agent_version;
    absl::Time reported = absl::InfinitePast();
    absl::Time last_heartbeat = absl::InfinitePast();
    bool suspect = false;
    // The node as of its last event, while the event history still holds
    // it: a removal then shares it instead of building another.
    std::weak_ptr<const NodeState> published;
    // The node as it is now, while a watch snapshot holds it: the watches
    // that start before the node changes share it instead of each copying
    // the fleet (issue 22 item 5). Reset by every change under `mu_`.
    mutable std::weak_ptr<const NodeState> current;
  };

  // The report being applied (at most one: reports hold `apply_mu_`) and the
  // beats for its node that arrived meanwhile, applied after it.
  struct ReportInFlight {
    std::string node;
    absl::flat_hash_set<std::string> device_ids;
    std::vector<DeviceBeat> beats;
  };

  // `node` was heard from at `at`: its last heartbeat moves, and the
  // snapshot watches share (NodeEntry::current) is let go, as after every
  // change. With `mu_` held exclusively.
  static void HeardAt(NodeEntry& node, absl::Time at);

  // Commits `node` (whose devices the store has taken); `changed` records
  // an event. Returns the node as committed, for the observer (null when
  // there is none and nothing changed).
  std::shared_ptr<const NodeState> CommitLocked(NodeState node,
                                                ReportInFlight flight,
                                                bool changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<BeatAnswer> BeatInFlightLocked(
      const std::string& node, absl::Span<const DeviceBeat> utilisation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node as listings and events show it, devices from the store.
  NodeState NodeOf(const std::string& id, const NodeEntry& entry) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Removes `node` from the inventory (not the store) with an event.
  void RemoveLocked(const std::string& node, std::string reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes nodes' devices from the store and tells the observer, in order.
  void TellRemoved(const std::vector<std::string>& nodes,
                   const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // `snapshot_bytes`: what the event's snapshot adds to the history (0 when
  // it shares an earlier event's).
  void RecordEvent(InventoryEvent::Kind kind,
                   std::shared_ptr<const NodeState> node, std::string reason,
                   size_t snapshot_bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The wakes due after the events just recorded; hand them to Wake().
  Wakes TakeWakesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues `wakes` for the notifier thread.
  void Wake(Wakes wakes) ABSL_LOCKS_EXCLUDED(mu_);
  void RunNotifier();
  // Whether the history holds every event after `after` (<= sequence_).
  bool HoldsEventsAfterLocked(int64_t after) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The live nodes' names in order, as of the latest change of the set;
  // rebuilt (O(nodes), `mu_` held shared) only when the set changed since.
  std::shared_ptr<const std::vector<std::string>> NodeNames() const
      ABSL_LOCKS_EXCLUDED(names_mu_, mu_);
  // Every live node as a `kind` event "`reason`" at the latest sequence;
  // the nodes' snapshots are shared with other watches (NodeEntry::current).
  std::vector<InventoryEvent> SnapshotLocked(InventoryEvent::Kind kind,
                                             const std::string& reason) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const InventoryOptions options_;
  const std::string epoch_;
  DeviceStore* const devices_;
  InventoryObserver* const observer_;
  // Sequences changes to the device set (see the file comment); taken
  // before `mu_`, never while holding it.
  absl::Mutex apply_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  // Bumped under `mu_` whenever nodes_ gains or loses a node.
  std::atomic<uint64_t> membership_{0};
  // NodeNames()'s copy and the membership_ it is of; listings take this
  // lock, heartbeats never.
  mutable absl::Mutex names_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable std::shared_ptr<const std::vector<std::string>> names_
      ABSL_GUARDED_BY(names_mu_);
  mutable uint64_t names_of_ ABSL_GUARDED_BY(names_mu_) = 0;
  // ListDevices pages being read now (max_concurrent_listings bounds it).
  mutable absl::Mutex listing_mu_;
  mutable int listings_ ABSL_GUARDED_BY(listing_mu_) = 0;
  int max_listings_ = 1;
  std::optional<ReportInFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  // Wake id -> (the sequence it waits to see exceeded, the callback).
  mutable std::map<int64_t, std::pair<int64_t, std::function<void()>>> wakes_
      ABSL_GUARDED_BY(mu_);
  mutable int64_t next_wake_id_ ABSL_GUARDED_BY(mu_) = 0;
  // Ordered for listings; a B-tree, as every beat looks its node up here.
  absl::btree_map<std::string, NodeEntry> nodes_ ABSL_GUARDED_BY(mu_);
  // With the estimated bytes of the snapshot each event made (0 when it
  // shares an earlier event's).
  std::deque<std::pair<InventoryEvent, size_t>> events_ ABSL_GUARDED_BY(mu_);
  size_t event_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;

  // The notifier thread and the wakes it has to run.
  absl::Mutex notify_mu_;
  Wakes pending_wakes_ ABSL_GUARDED_BY(notify_mu_);
  bool stopping_ ABSL_GUARDED_BY(notify_mu_) = false;
  std::thread notifier_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_FLEET_INVENTORY_H_
