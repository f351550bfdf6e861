#include "server/fleet/inventory.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "selector/device_traits.h"
#include "server/model/page_token.h"

namespace ctxsel::server {
namespace {

constexpr size_t kDevicesPerCancelCheck = 64;

absl::Status NodeNotFound(const std::string& node) {
  return WithResourceInfo(WithErrorInfo(absl::NotFoundError(absl::StrCat(
                                            "node: '", node, "' is not known")),
                                        kReasonNodeNotFound, {{"node", node}}),
                          "ctxsel.v1.Node", node);
}

// An estimate of the memory a node snapshot holds, for the event history's
// byte bound.
size_t ApproxBytes(const NodeState& node) {
  size_t bytes = sizeof(NodeState) + node.id.size() + node.agent_version.size();
  for (const Device& d : node.devices) {
    bytes += sizeof(Device) + d.id.size() + d.node.size() +
             d.sycl_architecture.size();
    for (const selector::DeviceTraitField& field :
         selector::kDeviceTraitFields) {
      for (const std::string& name : d.traits.*field.member) {
        bytes += 32 + name.size();
      }
    }
  }
  return bytes;
}

// 64 random bits: two inventories (replicas, restarts) never share one in
// practice, so a sequence is never resumed against another numbering.
std::string NewEpoch() {
  absl::BitGen bits;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(bits));
}

}  // namespace

Inventory::Inventory(InventoryOptions options, DeviceStore* devices,
                     InventoryObserver* observer)
    : options_(std::move(options)),
      epoch_(NewEpoch()),
      devices_(devices),
      observer_(observer),
      names_(std::make_shared<const std::vector<std::string>>()),
      notifier_([this] { RunNotifier(); }) {
  max_listings_ =
      options_.max_concurrent_listings > 0
          ? options_.max_concurrent_listings
          : std::max(1,
                     static_cast<int>(std::thread::hardware_concurrency()) / 2);
}

Inventory::~Inventory() {
  {
    absl::MutexLock lock(&notify_mu_);
    stopping_ = true;
  }
  notifier_.join();
}

void Inventory::RunNotifier() {
  while (true) {
    Wakes wakes;
    {
      absl::MutexLock lock(&notify_mu_);
      notify_mu_.Await(absl::Condition(
          +[](Inventory* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->notify_mu_) {
            return self->stopping_ || !self->pending_wakes_.empty();
          },
          this));
      if (pending_wakes_.empty()) return;  // stopping, nothing left to run
      wakes.swap(pending_wakes_);
    }
    for (std::function<void()>& wake : wakes) wake();
  }
}

absl::Status Inventory::Report(NodeState node) {
  CTXSEL_RETURN_IF_ERROR(NormalizeReport(node, options_.report_limits));
  Wakes wakes;
  {
    absl::MutexLock apply(&apply_mu_);
    // Devices change only under apply_mu_: what the store holds now is
    // what this report replaces.
    const std::vector<Device> before = devices_->NodeDevices(node.id);
    bool known = false;
    {
      absl::MutexLock lock(&mu_);
      known = nodes_.find(node.id) != nodes_.end();
      ReportInFlight flight{node.id, {}, {}};
      for (const Device& d : node.devices) flight.device_ids.insert(d.id);
      in_flight_ = std::move(flight);
    }
    const absl::Status applied =
        devices_->ReplaceNodeDevices(node.id, node.devices);
    const bool changed = !known || !SameDevices(before, node.devices);
    std::shared_ptr<const NodeState> reported;
    {
      absl::MutexLock lock(&mu_);
      ReportInFlight flight = *std::move(in_flight_);
      in_flight_.reset();
      if (!applied.ok()) return applied;
      reported = CommitLocked(std::move(node), std::move(flight), changed);
      wakes = TakeWakesLocked();
    }
    if (observer_ != nullptr) observer_->NodeReported(*reported);
  }
  Wake(std::move(wakes));
  return absl::OkStatus();
}

std::shared_ptr<const NodeState> Inventory::CommitLocked(NodeState node,
                                                         ReportInFlight flight,
                                                         bool changed) {
  const absl::Time now = options_.now();
  node.reported = node.last_heartbeat = now;
  node.suspect = false;  // the store's new devices are healthy
  auto [it, added] = nodes_.try_emplace(node.id);
  if (added) membership_.fetch_add(1, std::memory_order_release);
  NodeEntry& entry = it->second;
  entry.agent_version = node.agent_version;
  entry.reported = entry.last_heartbeat = now;
  entry.suspect = false;
  entry.current.reset();
  // Beats that came while the store took the report are newer than it;
  // recorded under `mu_` so that no later beat overtakes them.
  if (!flight.beats.empty()) {
    devices_->RecordBeat(node.id, flight.beats);
    for (Device& d : node.devices) {
      for (const auto& [id, u] : flight.beats) {
        if (id == d.id) d.properties.utilisation = u;
      }
    }
  }
  // A re-report that changes nothing needs no snapshot, unless for the
  // observer.
  if (!changed && observer_ == nullptr) return nullptr;
  auto snapshot = std::make_shared<const NodeState>(std::move(node));
  if (changed) {
    entry.published = snapshot;
    const size_t bytes = ApproxBytes(*snapshot);
    RecordEvent(
        added ? InventoryEvent::Kind::kAdded : InventoryEvent::Kind::kChanged,
        snapshot, "reported", bytes);
  }
  return snapshot;
}

absl::StatusOr<Inventory::BeatAnswer> Inventory::Heartbeat(
    const std::string& node, absl::Span<const DeviceBeat> utilisation) {
  CTXSEL_RETURN_IF_ERROR(CheckBeat(utilisation));
  bool healthy_again = false;
  {
    absl::MutexLock lock(&mu_);
    if (in_flight_.has_value() && in_flight_->node == node) {
      return BeatInFlightLocked(node, utilisation);
    }
    const auto it = nodes_.find(node);
    if (it == nodes_.end()) return BeatAnswer::kUnknownNode;
    // The utilisation the store takes next: a watch starting meanwhile may
    // share the old one until the node's next beat.
    HeardAt(it->second, options_.now());
    healthy_again = std::exchange(it->second.suspect, false);
  }
  // No inventory lock from here: the store takes its own. MarkSuspects
  // cannot mark the node again meanwhile (it just beat).
  if (healthy_again) devices_->SetNodeSuspect(node, false);
  if (!devices_->RecordBeat(node, utilisation)) {
    return BeatAnswer::kUnknownDevice;
  }
  if (observer_ != nullptr) observer_->NodeBeat(node);
  return BeatAnswer::kRecorded;
}

void Inventory::NodesChanged(const std::vector<std::string>& nodes,
                             const std::string& reason) {
  Wakes wakes;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : nodes) {
      auto it = nodes_.find(id);
      if (it == nodes_.end()) continue;
      it->second.current.reset();
      auto snapshot =
          std::make_shared<const NodeState>(NodeOf(it->first, it->second));
      const size_t bytes = ApproxBytes(*snapshot);
      RecordEvent(InventoryEvent::Kind::kChanged, std::move(snapshot), reason,
                  bytes);
    }
    wakes = TakeWakesLocked();
  }
  Wake(std::move(wakes));
}

void Inventory::MarkSuspects() {
  if (options_.suspect_after == absl::InfiniteDuration()) return;
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  for (auto& [id, node] : nodes_) {
    if (!node.suspect && now - node.last_heartbeat > options_.suspect_after) {
      node.suspect = true;
      node.current.reset();
      // Under `mu_`, so that a beat that clears the mark comes after.
      devices_->SetNodeSuspect(id, true);
    }
  }
}

absl::StatusOr<Inventory::BeatAnswer> Inventory::BeatInFlightLocked(
    const std::string& node, absl::Span<const DeviceBeat> utilisation) {
  // The agent beats for the devices it is reporting now.
  for (const auto& [device_id, u] : utilisation) {
    if (!in_flight_->device_ids.contains(device_id)) {
      return BeatAnswer::kUnknownDevice;
    }
  }
  const auto it = nodes_.find(node);
  if (it != nodes_.end()) HeardAt(it->second, options_.now());
  in_flight_->beats.insert(in_flight_->beats.end(), utilisation.begin(),
                           utilisation.end());
  return BeatAnswer::kRecorded;
}

absl::Status Inventory::Deregister(const std::string& node) {
  if (node.empty()) return FieldViolation("node", "required");
  Wakes wakes;
  {
    absl::MutexLock apply(&apply_mu_);
    {
      absl::MutexLock lock(&mu_);
      if (nodes_.find(node) == nodes_.end()) {
        return NodeNotFound(node);
      }
      RemoveLocked(node, "deregistered");
      wakes = TakeWakesLocked();
    }
    TellRemoved({node}, "deregistered");
  }
  Wake(std::move(wakes));
  return absl::OkStatus();
}

std::vector<std::string> Inventory::ExpireStale() {
  std::vector<std::string> expired;
  const std::string reason = absl::StrCat(
      "expired (no heartbeat for ", absl::FormatDuration(options_.ttl), ")");
  Wakes wakes;
  {
    absl::MutexLock apply(&apply_mu_);
    {
      absl::MutexLock lock(&mu_);
      const absl::Time now = options_.now();
      for (const auto& [id, node] : nodes_) {
        if (now - node.last_heartbeat > options_.ttl) expired.push_back(id);
      }
      for (const std::string& id : expired) RemoveLocked(id, reason);
      wakes = TakeWakesLocked();
    }
    TellRemoved(expired, reason);
  }
  Wake(std::move(wakes));
  return expired;
}

void Inventory::ResetSilence() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  for (auto& [id, node] : nodes_) {
    HeardAt(node, std::max(node.last_heartbeat, now));
  }
}

void Inventory::HeardAt(NodeEntry& node, absl::Time at) {
  node.last_heartbeat = at;
  node.current.reset();
}

void Inventory::RemoveLocked(const std::string& node, std::string reason) {
  auto it = nodes_.find(node);
  // Share the last report's snapshot while an event still holds it; build
  // (and count) one from the store otherwise.
  std::shared_ptr<const NodeState> last = it->second.published.lock();
  size_t bytes = 0;
  if (last == nullptr) {
    last = std::make_shared<const NodeState>(NodeOf(it->first, it->second));
    bytes = ApproxBytes(*last);
  }
  RecordEvent(InventoryEvent::Kind::kRemoved, std::move(last),
              std::move(reason), bytes);
  nodes_.erase(it);
  membership_.fetch_add(1, std::memory_order_release);
}

void Inventory::TellRemoved(const std::vector<std::string>& nodes,
                            const std::string& reason) {
  for (const std::string& node : nodes) {
    devices_->RemoveNodeDevices(node);
    if (observer_ != nullptr) observer_->NodeRemoved(node, reason);
  }
}

NodeState Inventory::NodeOf(const std::string& id,
                            const NodeEntry& entry) const {
  NodeState node;
  node.id = id;
  node.agent_version = entry.agent_version;
  node.devices = devices_->NodeDevices(id);
  node.reported = entry.reported;
  node.last_heartbeat = entry.last_heartbeat;
  node.suspect = entry.suspect;
  return node;
}

void Inventory::RecordEvent(InventoryEvent::Kind kind,
                            std::shared_ptr<const NodeState> node,
                            std::string reason, size_t snapshot_bytes) {
  const size_t bytes = snapshot_bytes + sizeof(InventoryEvent) + reason.size();
  events_.push_back({InventoryEvent{kind, std::move(node), std::move(reason),
                                    ++sequence_, options_.now()},
                     bytes});
  event_bytes_ += bytes;
  // The newest event always stays, whatever its size.
  while (events_.size() > 1 && (events_.size() > options_.event_history ||
                                event_bytes_ > options_.event_history_bytes)) {
    event_bytes_ -= events_.front().second;
    events_.pop_front();
  }
}

Inventory::Wakes Inventory::TakeWakesLocked() {
  Wakes due;
  for (auto it = wakes_.begin(); it != wakes_.end();) {
    if (sequence_ > it->second.first) {
      due.push_back(std::move(it->second.second));
      it = wakes_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

void Inventory::Wake(Wakes wakes) {
  if (wakes.empty()) return;
  absl::MutexLock lock(&notify_mu_);
  for (std::function<void()>& wake : wakes) {
    pending_wakes_.push_back(std::move(wake));
  }
}

std::optional<int64_t> Inventory::NotifyAfter(
    int64_t after, std::function<void()> wake) const {
  absl::MutexLock lock(&mu_);
  if (sequence_ > after) return std::nullopt;
  const int64_t id = ++next_wake_id_;
  wakes_.emplace(id, std::make_pair(after, std::move(wake)));
  return id;
}

void Inventory::CancelNotify(int64_t id) const {
  absl::MutexLock lock(&mu_);
  wakes_.erase(id);
}

absl::StatusOr<Page<NodeState>> Inventory::ListNodes(
    int page_size, const std::string& page_token,
    PageBudget<NodeState> budget) const {
  std::string after;
  if (!page_token.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(std::vector<std::string> decoded,
                            DecodePageToken(page_token, "ListNodes", "", 1));
    after = decoded[0];
  }
  CTXSEL_ASSIGN_OR_RETURN(const size_t limit,
                          PageSizeOf(page_size, options_.default_page_size,
                                     options_.max_page_size));
  absl::ReaderMutexLock lock(&mu_);
  Page<NodeState> page;
  auto it = page_token.empty() ? nodes_.begin() : nodes_.upper_bound(after);
  for (; it != nodes_.end(); ++it) {
    if (page.items.size() == limit) {
      page.next_page_token =
          EncodePageToken("ListNodes", "", {page.items.back().id});
      break;
    }
    NodeState node = NodeOf(it->first, it->second);
    const PageFit fit = budget.Take(node);
    if (fit == PageFit::kTooLarge) {
      return TooLargeForAPage(absl::StrCat("node ", it->first), budget);
    }
    if (fit == PageFit::kFull) {
      page.next_page_token =
          EncodePageToken("ListNodes", "", {page.items.back().id});
      break;
    }
    page.items.push_back(std::move(node));
  }
  return page;
}

absl::StatusOr<Page<Device>> Inventory::ListDevices(
    const DeviceFilter& device_filter, const std::string& node, int page_size,
    const std::string& page_token, PageBudget<Device> budget,
    const std::function<absl::Status()>& interrupted) const {
  const std::string filters =
      PageFilters({{"device_filter", device_filter.text()}, {"node", node}});
  std::pair<std::string, int> after = {"", -2};
  if (!page_token.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(
        std::vector<std::string> decoded,
        DecodePageToken(page_token, "ListDevices", filters, 2));
    after.first = decoded[0];
    if (!absl::SimpleAtoi(decoded[1], &after.second)) {
      return WithErrorInfo(
          FieldViolation("page_token",
                         "not a token from a previous ListDevices answer"),
          kReasonPageTokenInvalid, {{"listing", "ListDevices"}});
    }
  }
  CTXSEL_ASSIGN_OR_RETURN(const size_t limit,
                          PageSizeOf(page_size, options_.default_page_size,
                                     options_.max_page_size));
  // One of max_listings_ pages read at once (InventoryOptions).
  {
    absl::MutexLock lock(&listing_mu_);
    auto turn = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(listing_mu_) {
      return listings_ < max_listings_;
    };
    listing_mu_.Await(absl::Condition(&turn));
    ++listings_;
  }
  absl::Cleanup done = [this] {
    absl::MutexLock lock(&listing_mu_);
    --listings_;
  };
  Page<Device> page;
  DeviceScan scan(&device_filter);
  // A step reads about this many devices from the store; between steps the
  // call is asked whether it is still wanted.
  scan.max_read = kDevicesPerCancelCheck;
  size_t examined = 0;
  size_t next_check = kDevicesPerCancelCheck;
  // The page reads one version of the node list, and no inventory lock.
  const std::shared_ptr<const std::vector<std::string>> names = NodeNames();
  auto from = std::lower_bound(names->begin(), names->end(),
                               node.empty() ? after.first : node);
  absl::Span<const std::string> rest(names->data() + (from - names->begin()),
                                     names->end() - from);
  if (!node.empty()) {
    rest = rest.subspan(0, !rest.empty() && rest[0] == node ? 1 : 0);
  }
  for (; !rest.empty(); rest.remove_prefix(scan.nodes_read)) {
    scan.Start();
    scan.after_index =
        rest.front() == after.first ? after.second : DeviceScan::kNoIndex;
    // One more than the page holds: whether a next page exists.
    scan.max_found = limit - page.items.size() + 1;
    devices_->ScanDevices(rest, &scan);
    for (Device& d : scan.found) {
      const PageFit fit =
          page.items.size() == limit ? PageFit::kFull : budget.Take(d);
      if (fit == PageFit::kTooLarge) {
        return TooLargeForAPage(absl::StrCat("device ", d.id), budget);
      }
      if (fit == PageFit::kFull) {
        const Device& prev = page.items.back();
        page.next_page_token = EncodePageToken(
            "ListDevices", filters, {prev.node, absl::StrCat(prev.index)});
        return page;
      }
      page.items.push_back(std::move(d));
    }
    // Matching is the slow part of a long listing: a call cancelled or
    // past its deadline stops here rather than finishing unseen.
    examined += scan.devices_read;
    if (interrupted && examined >= next_check) {
      next_check = examined + kDevicesPerCancelCheck;
      CTXSEL_RETURN_IF_ERROR(interrupted());
    }
  }
  return page;
}

std::shared_ptr<const std::vector<std::string>> Inventory::NodeNames() const {
  absl::MutexLock lock(&names_mu_);
  if (names_of_ != membership_.load(std::memory_order_acquire)) {
    // One lister rebuilds; the others wait here for its copy.
    absl::ReaderMutexLock state(&mu_);
    auto names = std::make_shared<std::vector<std::string>>();
    names->reserve(nodes_.size());
    for (const auto& [id, entry] : nodes_) names->push_back(id);
    names_ = std::move(names);
    names_of_ = membership_.load(std::memory_order_relaxed);
  }
  return names_;
}

void DeviceStore::ScanDevices(absl::Span<const std::string> nodes,
                              DeviceScan* scan) const {
  for (const std::string& node : nodes) {
    if (!scan->NextNode()) return;
    const std::vector<Device> devices = NodeDevices(node);
    for (const Device& d : devices) {
      if (!scan->Reads(d.index) || !scan->filter->Matches(d, devices)) {
        continue;
      }
      if (!scan->Keep(d)) return;
    }
  }
}

std::vector<NodeState> Inventory::Nodes(int64_t* sequence) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<NodeState> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [id, entry] : nodes_) nodes.push_back(NodeOf(id, entry));
  *sequence = sequence_;
  return nodes;
}

bool Inventory::HoldsEventsAfterLocked(int64_t after) const {
  return sequence_ <= after ||
         (!events_.empty() && events_.front().first.sequence <= after + 1);
}

std::vector<InventoryEvent> Inventory::SnapshotLocked(
    InventoryEvent::Kind kind, const std::string& reason) const {
  const absl::Time now = options_.now();
  std::vector<InventoryEvent> events;
  events.reserve(nodes_.size() + 1);
  for (const auto& [id, entry] : nodes_) {
    std::shared_ptr<const NodeState> node = entry.current.lock();
    if (node == nullptr) {
      node = std::make_shared<const NodeState>(NodeOf(id, entry));
      entry.current = node;
    }
    events.push_back({kind, std::move(node), reason, sequence_, now});
  }
  return events;
}

absl::StatusOr<WatchStart> Inventory::StartWatch(const WatchFrom& from) const {
  if (from.resume_after < 0) {
    return FieldViolation("resume_after", "must not be negative");
  }
  if (from.resume_epoch.empty() && from.resume_after != 0) {
    return FieldViolation("resume_epoch", "required with resume_after");
  }
  // Exclusive: the snapshot keeps the nodes it builds (NodeEntry::current).
  absl::MutexLock lock(&mu_);
  WatchStart start{.sequence = sequence_};
  if (from.resume_epoch.empty() && !from.resync) {
    if (from.initial) {
      start.events = SnapshotLocked(InventoryEvent::Kind::kAdded, "initial");
    }
    return start;
  }
  if (from.resume_epoch == epoch_ && from.resume_after > sequence_) {
    return FieldViolation(
        "resume_after",
        absl::StrCat(from.resume_after, " is past this server's latest event ",
                     sequence_, " of epoch ", epoch_));
  }
  if (from.resume_epoch == epoch_ && !from.resync &&
      HoldsEventsAfterLocked(from.resume_after)) {
    for (const auto& [event, bytes] : events_) {
      if (event.sequence > from.resume_after) start.events.push_back(event);
    }
    return start;
  }
  start.resync = true;
  start.events = SnapshotLocked(InventoryEvent::Kind::kResync, "resync");
  start.events.push_back({InventoryEvent::Kind::kResyncEnd, nullptr, "resync",
                          sequence_, options_.now()});
  return start;
}

absl::StatusOr<std::vector<InventoryEvent>> Inventory::EventsAfter(
    int64_t after, absl::Duration timeout, size_t max_bytes) const {
  absl::ReaderMutexLock lock(&mu_);
  auto newer = [this, after]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return sequence_ > after;
  };
  mu_.AwaitWithTimeout(absl::Condition(&newer), timeout);
  std::vector<InventoryEvent> events;
  if (sequence_ <= after) return events;
  if (!HoldsEventsAfterLocked(after)) {
    return WithErrorInfo(
        absl::OutOfRangeError(
            absl::StrCat("watch fell behind: events after ", after,
                         " are no longer kept; resume the watch to resync")),
        kReasonWatchFellBehind, {{"after", absl::StrCat(after)}});
  }
  // Sequences are consecutive: skip straight to the first one wanted.
  const size_t first =
      static_cast<size_t>(after + 1 - events_.front().first.sequence);
  size_t bytes = 0;
  for (size_t i = first; i < events_.size(); ++i) {
    bytes += events_[i].second;
    if (!events.empty() && bytes > max_bytes) break;
    events.push_back(events_[i].first);
  }
  return events;
}

}  // namespace ctxsel::server
