#include "server/inventory.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "server/page_token.h"

namespace ctxsel::server {
namespace {

constexpr size_t kDevicesPerCancelCheck = 64;

absl::Status NodeNotFound(const std::string& node) {
  return WithResourceInfo(WithErrorInfo(absl::NotFoundError(absl::StrCat(
                                            "node: '", node, "' is not known")),
                                        "NODE_NOT_FOUND", {{"node", node}}),
                          "ctxsel.v1.Node", node);
}

int ClampPageSize(int requested, const InventoryOptions& options) {
  if (requested <= 0) return options.default_page_size;
  return std::min(requested, options.max_page_size);
}

// An estimate of the memory a node snapshot holds, for the event history's
// byte bound.
size_t ApproxBytes(const NodeState& node) {
  size_t bytes = sizeof(NodeState) + node.id.size() + node.agent_version.size();
  for (const Device& d : node.devices) {
    bytes += sizeof(Device) + d.id.size() + d.node.size() +
             d.sycl_architecture.size();
    for (const selector::NameSet* set :
         {&d.traits.kind, &d.traits.arch, &d.traits.isa, &d.traits.vendor,
          &d.traits.extension}) {
      for (const std::string& name : *set) bytes += 32 + name.size();
    }
  }
  return bytes;
}

}  // namespace

Inventory::Inventory(InventoryOptions options, InventoryObserver* observer)
    : options_(std::move(options)),
      observer_(observer),
      notifier_([this] { RunNotifier(); }) {}

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
  if (absl::Status s = NormalizeReport(node, options_.report_limits); !s.ok()) {
    return s;
  }
  Wakes wakes;
  {
    absl::MutexLock apply(&apply_mu_);
    {
      absl::MutexLock lock(&mu_);
      // Owners change only under apply_mu_, so this check stays true until
      // the commit below.
      if (absl::Status s = CheckOwnersLocked(node); !s.ok()) return s;
      ReportInFlight flight{node.id, {}, {}};
      for (const Device& d : node.devices) flight.device_ids.insert(d.id);
      in_flight_ = std::move(flight);
    }
    const absl::Status applied =
        observer_ == nullptr
            ? absl::OkStatus()
            : observer_->NodeDevicesChanged(node.id, node.devices);
    absl::MutexLock lock(&mu_);
    ReportInFlight flight = *std::move(in_flight_);
    in_flight_.reset();
    if (!applied.ok()) return applied;
    CommitLocked(std::move(node), std::move(flight));
    wakes = TakeWakesLocked();
  }
  Wake(std::move(wakes));
  return absl::OkStatus();
}

absl::Status Inventory::CheckOwnersLocked(const NodeState& node) const {
  for (size_t i = 0; i < node.devices.size(); ++i) {
    const auto owner = device_nodes_.find(node.devices[i].id);
    if (owner != device_nodes_.end() && owner->second.node != node.id) {
      return absl::AlreadyExistsError(
          absl::StrCat("node.devices[", i, "].id: '", node.devices[i].id,
                       "' belongs to node '", owner->second.node, "'"));
    }
  }
  return absl::OkStatus();
}

void Inventory::CommitLocked(NodeState node, ReportInFlight flight) {
  const absl::Time now = options_.now();
  node.reported = node.last_heartbeat = now;
  auto [it, added] = nodes_.try_emplace(node.id);
  const bool changed = added || !SameDevices(it->second.devices, node.devices);
  if (!added) {
    for (const Device& d : it->second.devices) device_nodes_.erase(d.id);
  }
  for (size_t i = 0; i < node.devices.size(); ++i) {
    device_nodes_[node.devices[i].id] = DeviceOwner{node.id, i};
  }
  const bool was_suspect = !added && it->second.suspect;
  it->second = std::move(node);
  it->second.suspect = was_suspect;
  SetSuspectLocked(it->second, false);
  // Beats that came while the observer took the report are newer than it.
  if (!flight.beats.empty()) RecordBeatLocked(it->second, flight.beats);
  if (changed) {
    auto snapshot = std::make_shared<const NodeState>(it->second);
    published_[it->first] = snapshot;
    const size_t bytes = ApproxBytes(*snapshot);
    RecordEvent(
        added ? InventoryEvent::Kind::kAdded : InventoryEvent::Kind::kChanged,
        std::move(snapshot), "reported", bytes);
  }
}

absl::StatusOr<Inventory::BeatAnswer> Inventory::Heartbeat(
    const std::string& node,
    const std::vector<std::pair<std::string, double>>& utilisation) {
  for (size_t i = 0; i < utilisation.size(); ++i) {
    const double u = utilisation[i].second;
    if (!std::isfinite(u) || u < 0 || u > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("utilisation[", i, "] (", utilisation[i].first, "): ", u,
                       " is not in [0, 1]"));
    }
  }
  absl::MutexLock lock(&mu_);
  if (in_flight_.has_value() && in_flight_->node == node) {
    return BeatInFlightLocked(node, utilisation);
  }
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return BeatAnswer::kUnknownNode;
  for (const auto& [device_id, u] : utilisation) {
    const auto owner = device_nodes_.find(device_id);
    if (owner == device_nodes_.end() || owner->second.node != node) {
      return BeatAnswer::kUnknownDevice;
    }
  }
  it->second.last_heartbeat = options_.now();
  SetSuspectLocked(it->second, false);
  RecordBeatLocked(it->second, utilisation);
  return BeatAnswer::kRecorded;
}

void Inventory::RecordBeatLocked(
    NodeState& node,
    absl::Span<const std::pair<std::string, double>> utilisation) {
  for (const auto& [device_id, u] : utilisation) {
    // Every id was checked to be one of `node`'s.
    node.devices[device_nodes_.at(device_id).position].properties.utilisation =
        u;
  }
  if (observer_ != nullptr)
    observer_->UtilisationsChanged(node.id, utilisation);
}

void Inventory::SetSuspectLocked(NodeState& node, bool suspect) {
  if (node.suspect == suspect) return;
  node.suspect = suspect;
  if (observer_ != nullptr) observer_->NodeSuspectChanged(node.id, suspect);
}

void Inventory::MarkSuspects() {
  if (options_.suspect_after == absl::InfiniteDuration()) return;
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  for (auto& [id, node] : nodes_) {
    if (now - node.last_heartbeat > options_.suspect_after) {
      SetSuspectLocked(node, true);
    }
  }
}

absl::StatusOr<Inventory::BeatAnswer> Inventory::BeatInFlightLocked(
    const std::string& node,
    const std::vector<std::pair<std::string, double>>& utilisation) {
  // The agent beats for the devices it is reporting now.
  for (const auto& [device_id, u] : utilisation) {
    if (!in_flight_->device_ids.contains(device_id)) {
      return BeatAnswer::kUnknownDevice;
    }
  }
  const auto it = nodes_.find(node);
  if (it != nodes_.end()) it->second.last_heartbeat = options_.now();
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
    TellRemoved({node});
  }
  Wake(std::move(wakes));
  return absl::OkStatus();
}

std::vector<std::string> Inventory::ExpireStale() {
  std::vector<std::string> expired;
  Wakes wakes;
  {
    absl::MutexLock apply(&apply_mu_);
    {
      absl::MutexLock lock(&mu_);
      const absl::Time now = options_.now();
      for (const auto& [id, node] : nodes_) {
        if (now - node.last_heartbeat > options_.ttl) expired.push_back(id);
      }
      for (const std::string& id : expired) {
        RemoveLocked(id, absl::StrCat("expired (no heartbeat for ",
                                      absl::FormatDuration(options_.ttl), ")"));
      }
      wakes = TakeWakesLocked();
    }
    TellRemoved(expired);
  }
  Wake(std::move(wakes));
  return expired;
}

void Inventory::RemoveLocked(const std::string& node, std::string reason) {
  auto it = nodes_.find(node);
  for (const Device& d : it->second.devices) device_nodes_.erase(d.id);
  // Share the last report's snapshot while an event still holds it; copy
  // (and count) it otherwise.
  std::shared_ptr<const NodeState> last;
  if (auto published = published_.find(node); published != published_.end()) {
    last = published->second.lock();
    published_.erase(published);
  }
  size_t bytes = 0;
  if (last == nullptr) {
    last = std::make_shared<const NodeState>(it->second);
    bytes = ApproxBytes(*last);
  }
  RecordEvent(InventoryEvent::Kind::kRemoved, std::move(last),
              std::move(reason), bytes);
  nodes_.erase(it);
}

void Inventory::TellRemoved(const std::vector<std::string>& nodes) {
  if (observer_ == nullptr) return;
  for (const std::string& node : nodes) observer_->NodeRemoved(node);
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
    absl::StatusOr<std::vector<std::string>> decoded =
        DecodePageToken(page_token, "ListNodes", "", 1);
    if (!decoded.ok()) return decoded.status();
    after = (*decoded)[0];
  }
  const size_t limit = ClampPageSize(page_size, options_);
  absl::ReaderMutexLock lock(&mu_);
  Page<NodeState> page;
  auto it = page_token.empty() ? nodes_.begin() : nodes_.upper_bound(after);
  for (; it != nodes_.end(); ++it) {
    const PageFit fit =
        page.items.size() == limit ? PageFit::kFull : budget.Take(it->second);
    if (fit == PageFit::kTooLarge) {
      return TooLargeForAPage(absl::StrCat("node ", it->first), budget);
    }
    if (fit == PageFit::kFull) {
      page.next_page_token =
          EncodePageToken("ListNodes", "", {page.items.back().id});
      break;
    }
    page.items.push_back(it->second);
  }
  return page;
}

absl::StatusOr<Page<Device>> Inventory::ListDevices(
    const DeviceFilter& device_filter, const std::string& node, int page_size,
    const std::string& page_token, PageBudget<Device> budget,
    const std::function<absl::Status()>& interrupted) const {
  const std::string filters = PageFilters(
      {{"device_filter", device_filter.text()}, {"node", node}});
  std::pair<std::string, int> after = {"", -2};
  if (!page_token.empty()) {
    absl::StatusOr<std::vector<std::string>> decoded =
        DecodePageToken(page_token, "ListDevices", filters, 2);
    if (!decoded.ok()) return decoded.status();
    after.first = (*decoded)[0];
    if (!absl::SimpleAtoi((*decoded)[1], &after.second)) {
      return FieldViolation("page_token",
                            "not a token from a previous ListDevices answer");
    }
  }
  const size_t limit = ClampPageSize(page_size, options_);
  absl::ReaderMutexLock lock(&mu_);
  Page<Device> page;
  size_t examined = 0;
  auto it = node.empty() ? nodes_.lower_bound(after.first) : nodes_.find(node);
  for (; it != nodes_.end() && (node.empty() || it->first == node); ++it) {
    for (const Device& d : it->second.devices) {
      if (std::make_pair(d.node, d.index) <= after) continue;
      // Matching is the slow part of a long listing: a call cancelled or
      // past its deadline stops here rather than finishing unseen.
      if (interrupted && ++examined % kDevicesPerCancelCheck == 0) {
        if (absl::Status s = interrupted(); !s.ok()) return s;
      }
      if (!device_filter.Matches(d, it->second.devices)) continue;
      const PageFit fit =
          page.items.size() == limit ? PageFit::kFull : budget.Take(d);
      if (fit == PageFit::kTooLarge) {
        return TooLargeForAPage(absl::StrCat("device ", d.id), budget);
      }
      if (fit == PageFit::kFull) {
        const Device& last = page.items.back();
        page.next_page_token = EncodePageToken(
            "ListDevices", filters, {last.node, absl::StrCat(last.index)});
        return page;
      }
      page.items.push_back(d);
    }
  }
  return page;
}

std::vector<NodeState> Inventory::Nodes(int64_t* sequence) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<NodeState> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) nodes.push_back(node);
  *sequence = sequence_;
  return nodes;
}

absl::StatusOr<std::vector<InventoryEvent>> Inventory::EventsAfter(
    int64_t after, absl::Duration timeout) const {
  absl::ReaderMutexLock lock(&mu_);
  auto newer = [this, after]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return sequence_ > after;
  };
  mu_.AwaitWithTimeout(absl::Condition(&newer), timeout);
  std::vector<InventoryEvent> events;
  if (sequence_ <= after) return events;
  if (events_.empty() || events_.front().first.sequence > after + 1) {
    return absl::OutOfRangeError(
        absl::StrCat("watch fell behind: events after ", after,
                     " are no longer kept; watch again"));
  }
  // Sequences are consecutive: skip straight to the first one wanted.
  const size_t first =
      static_cast<size_t>(after + 1 - events_.front().first.sequence);
  for (size_t i = first; i < events_.size(); ++i) {
    events.push_back(events_[i].first);
  }
  return events;
}

}  // namespace ctxsel::server
