#include "server/main/housekeeping.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/model/log_text.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {

Housekeeping::Housekeeping(Inventory* inventory, ClaimBook* claims,
                           Metrics* metrics, CordonBook* cordons,
                           std::function<bool()> stale)
    : inventory_(inventory),
      claims_(claims),
      metrics_(metrics),
      cordons_(cordons),
      stale_(std::move(stale)),
      thread_([this] { Run(); }) {}

Housekeeping::~Housekeeping() {
  stop_.Notify();
  thread_.join();
}

void Housekeeping::Run() {
  const absl::Duration tick = std::clamp(
      inventory_->options().ttl / 4, absl::Milliseconds(50), absl::Seconds(1));
  int64_t cursor = 0;
  inventory_->Nodes(&cursor);
  // Waiting on stop_ (not on the inventory) lets the destructor return at
  // once instead of after up to one tick.
  absl::StatusCode cordon_failure = absl::StatusCode::kOk;
  bool was_stale = false;
  while (!stop_.WaitForNotificationWithTimeout(tick)) {
    if (cordons_ != nullptr) {
      // The cordons known stay while the store does not answer; the first
      // failure of a streak is logged.
      absl::Status s = cordons_->Reload();
      if (!s.ok() && s.code() != cordon_failure) {
        spdlog::warn("cordons: {}", LogSafe(s.ToString()));
      }
      cordon_failure = s.code();
    }
    const bool stale = stale_ && stale_();
    if (!stale) {
      // Back in step: the agents it refused meanwhile get a TTL from now.
      if (was_stale) inventory_->ResetSilence();
      const std::vector<std::string> expired = inventory_->ExpireStale();
      if (metrics_ != nullptr && !expired.empty()) {
        metrics_->RecordNodesExpired(static_cast<int>(expired.size()));
      }
      inventory_->MarkSuspects();
    }
    was_stale = stale;
    absl::StatusOr<std::vector<InventoryEvent>> events =
        inventory_->EventsAfter(cursor, absl::ZeroDuration());
    if (!events.ok()) {
      // More changes than the history keeps happened within one tick.
      spdlog::warn("inventory log: {}", LogSafe(events.status().ToString()));
      inventory_->Nodes(&cursor);
      if (claims_ != nullptr) claims_->Tick(/*fleet_changed=*/true);
      continue;
    }
    for (const InventoryEvent& event : *events) {
      spdlog::info("{}", DescribeEvent(event));
      cursor = event.sequence;
    }
    if (claims_ != nullptr) claims_->Tick(/*fleet_changed=*/!events->empty());
  }
}

std::string DescribeEvent(const InventoryEvent& event) {
  const char* what = event.kind == InventoryEvent::Kind::kAdded     ? "added"
                     : event.kind == InventoryEvent::Kind::kChanged ? "changed"
                                                                    : "removed";
  return absl::StrCat("node ", LogSafe(event.node->id), " ", what, ": ",
                      event.node->devices.size(), " device(s) (",
                      LogSafe(event.reason), ")");
}

}  // namespace ctxsel::server
