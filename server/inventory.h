// inventory.h: the fleet as node agents report it — soft state.
//
// Agents send a full report when they connect (Report) and then heartbeats
// with utilisation (Heartbeat). A node whose last beat is older than the TTL
// is removed with its devices by ExpireStale(), which the server calls
// periodically. Nothing is persisted: after a restart the inventory is empty
// and a beat from a node it does not know answers kUnknownNode, which tells
// the agent to report again.
//
// Every change is also told to an InventoryObserver (placement) and recorded
// as an InventoryEvent for watchers, who either poll (EventsAfter) or ask to
// be woken (NotifyAfter) — the latter needs no thread per watcher.
//
//   Inventory inventory({.ttl = absl::Seconds(3)}, &placer_observer);
//   NodeState node{.id = "n1", .devices = {...}};
//   absl::Status s = inventory.Report(std::move(node));
//   inventory.Heartbeat("n1", {{"n1/0", 0.4}});  // kRecorded
//
// Thread safety: every method may be called from any thread. Lock order:
// changes to the set of devices (Report, Deregister, ExpireStale) are
// sequenced by `apply_mu_`, which they hold while they call the observer;
// the state lock `mu_` that heartbeats, listings and watchers take is held
// only to check and to commit, never across the observer's NodeDevicesChanged
// or NodeRemoved. So the observer sees device-set changes in the order the
// inventory applies them, while a slow placement rebuild does not stall
// heartbeats. Wake callbacks run on the inventory's own notifier thread
// with no inventory lock held.
#ifndef CTXSEL_SERVER_INVENTORY_H_
#define CTXSEL_SERVER_INVENTORY_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/device_filter.h"
#include "server/model.h"
#include "server/node_report.h"
#include "server/page_budget.h"

namespace ctxsel::server {

// Told about every change, one call at a time and in the order the
// inventory applies them. NodeDevicesChanged and NodeRemoved run under the
// inventory's sequencing lock only (they may be slow); UtilisationsChanged
// runs under its state lock (it must be cheap), once per heartbeat. A
// heartbeat that arrives while its node's report is being applied is told
// after that report.
class InventoryObserver {
 public:
  virtual ~InventoryObserver() = default;
  // `devices` are now all of `node`'s. An error rejects the report (the
  // inventory then keeps the node's previous state).
  virtual absl::Status NodeDevicesChanged(
      const std::string& node, const std::vector<Device>& devices) = 0;
  virtual void NodeRemoved(const std::string& node) = 0;
  // A heartbeat of `node`: (device id, utilisation in [0, 1]) for devices
  // of `node`, in the order they were beaten; a later pair for the same
  // device wins.
  virtual void UtilisationsChanged(
      const std::string& node,
      absl::Span<const std::pair<std::string, double>> utilisation) = 0;
  // `node` became suspect (its heartbeat is overdue) or healthy again.
  // Runs under the state lock, like UtilisationsChanged.
  virtual void NodeSuspectChanged(const std::string& node, bool suspect) = 0;
};

struct InventoryEvent {
  enum class Kind { kAdded, kChanged, kRemoved };
  Kind kind = Kind::kAdded;
  // The node as of the event (for kRemoved: as it was last reported).
  // Shared: every watcher reading the event points at one snapshot, and a
  // removal points at its node's last report's while the history holds it.
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
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;  // empty on the last page
};

class Inventory {
 public:
  Inventory(InventoryOptions options, InventoryObserver* observer);

  ~Inventory();

  // Takes a full report (NormalizeReport first). InvalidArgumentError for a
  // bad report, ResourceExhaustedError over options().report_limits,
  // AlreadyExistsError when a device id belongs to another node. O(devices
  // x log n).
  absl::Status Report(NodeState node);

  enum class BeatAnswer { kRecorded, kUnknownNode, kUnknownDevice };
  // Records a beat in O(beats), whatever the node's size. InvalidArgumentError
  // for utilisation outside [0, 1].
  absl::StatusOr<BeatAnswer> Heartbeat(
      const std::string& node,
      const std::vector<std::pair<std::string, double>>& utilisation);

  // Removes a node now. InvalidArgumentError for an empty id, NotFoundError
  // (with ResourceInfo) if unknown.
  absl::Status Deregister(const std::string& node);

  // Removes every node with no beat for the TTL; returns their ids.
  std::vector<std::string> ExpireStale();

  // Marks nodes whose beat is overdue (options().suspect_after) as suspect
  // and tells the observer; a node's next beat or report makes it healthy.
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
  absl::StatusOr<Page<Device>> ListDevices(
      const DeviceFilter& device_filter, const std::string& node,
      int page_size, const std::string& page_token,
      PageBudget<Device> budget = {},
      const std::function<absl::Status()>& interrupted = nullptr) const;

  // Every live node and the sequence of the latest event, atomically: a
  // watcher sends these, then events after that sequence.
  std::vector<NodeState> Nodes(int64_t* sequence) const;

  // Events with sequence > `after`, waiting up to `timeout` for the first.
  // OutOfRangeError when some of them were already dropped from history.
  absl::StatusOr<std::vector<InventoryEvent>> EventsAfter(
      int64_t after, absl::Duration timeout) const;

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
  // Where a device sits: its node and its position in the node's devices.
  struct DeviceOwner {
    std::string node;
    size_t position = 0;
  };

  // The report being applied (at most one: reports hold `apply_mu_`) and the
  // beats for its node that arrived meanwhile, applied after it.
  struct ReportInFlight {
    std::string node;
    absl::flat_hash_set<std::string> device_ids;
    std::vector<std::pair<std::string, double>> beats;
  };

  absl::Status CheckOwnersLocked(const NodeState& node) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CommitLocked(NodeState node, ReportInFlight flight)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<BeatAnswer> BeatInFlightLocked(
      const std::string& node,
      const std::vector<std::pair<std::string, double>>& utilisation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the utilisations of `node`'s devices and tells the observer, once.
  void RecordBeatLocked(
      NodeState& node,
      absl::Span<const std::pair<std::string, double>> utilisation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `node` from the inventory (not the observer) with an event.
  void RemoveLocked(const std::string& node, std::string reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells the observer about removed nodes, in order.
  void TellRemoved(const std::vector<std::string>& nodes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // `snapshot_bytes`: what the event's snapshot adds to the history (0 when
  // it shares an earlier event's).
  void RecordEvent(InventoryEvent::Kind kind,
                   std::shared_ptr<const NodeState> node, std::string reason,
                   size_t snapshot_bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetSuspectLocked(NodeState& node, bool suspect)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The wakes due after the events just recorded; hand them to Wake().
  Wakes TakeWakesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues `wakes` for the notifier thread.
  void Wake(Wakes wakes) ABSL_LOCKS_EXCLUDED(mu_);
  void RunNotifier();

  const InventoryOptions options_;
  InventoryObserver* const observer_;
  // Sequences changes to the device set (see the file comment); taken
  // before `mu_`, never while holding it.
  absl::Mutex apply_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::optional<ReportInFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  // Wake id -> (the sequence it waits to see exceeded, the callback).
  mutable std::map<int64_t, std::pair<int64_t, std::function<void()>>> wakes_
      ABSL_GUARDED_BY(mu_);
  mutable int64_t next_wake_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, NodeState> nodes_ ABSL_GUARDED_BY(mu_);
  // Each node as of its last event, while the event history still holds
  // it: a removal then shares it instead of copying. Weak, so a live node
  // costs no second copy of its devices.
  absl::flat_hash_map<std::string, std::weak_ptr<const NodeState>> published_
      ABSL_GUARDED_BY(mu_);
  // device id -> owner, for fleet-wide uniqueness and O(1) beats.
  absl::flat_hash_map<std::string, DeviceOwner> device_nodes_
      ABSL_GUARDED_BY(mu_);
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

#endif  // CTXSEL_SERVER_INVENTORY_H_
