#include "server/rpc/watch_reactor.h"

#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

WatchReactor::WatchReactor(std::shared_ptr<Link> link,
                           const Inventory* inventory, WatchStart start,
                           Authorizer::StreamGrant grant, Metrics* metrics)
    : link_(std::move(link)),
      inventory_(inventory),
      grant_(std::move(grant)),
      metrics_(metrics) {
  if (metrics_ != nullptr) metrics_->RecordWatcher(+1);
  absl::MutexLock lock(&link_->mu);
  link_->reactor = this;
  cursor_ = start.sequence;
  for (InventoryEvent& event : start.events) Queue(std::move(event));
  Pump();
}

void WatchReactor::Pump() {
  if (finished_ || write_in_flight_) return;
  if (revoked_) {
    FinishOnce(RevokedStatus());
    return;
  }
  if (cancelled_) {
    FinishOnce(grpc::Status::OK);
    return;
  }
  while (queue_.empty()) {
    if (!Refill()) return;
    if (!queue_.empty()) break;
    // Nothing new: sleep without a thread until the next change. nullopt
    // means a change slipped in since Refill; read it.
    wake_id_ = inventory_->NotifyAfter(cursor_, [link = link_] {
      absl::MutexLock lock(&link->mu);
      if (link->reactor == nullptr) return;
      link->reactor->wake_id_.reset();
      link->reactor->Pump();
    });
    if (wake_id_.has_value()) return;
  }
  // Converted only now: a watcher that does not read holds the shared
  // snapshots of its queue, never copies of them.
  const InventoryEvent& next = queue_.front();
  writing_.Clear();
  EventToProto(next, inventory_->epoch(), &writing_);
  if (metrics_ != nullptr) metrics_->RecordWatchLag(absl::Now() - next.time);
  queue_.pop_front();
  write_in_flight_ = true;
  StartWrite(&writing_);
}

bool WatchReactor::Refill() {
  absl::StatusOr<std::vector<InventoryEvent>> events =
      inventory_->EventsAfter(cursor_, absl::ZeroDuration(), kMaxRefillBytes);
  if (!events.ok()) {
    FinishOnce(ToGrpcStatus(events.status()));
    return false;
  }
  for (InventoryEvent& event : *events) {
    cursor_ = event.sequence;
    Queue(std::move(event));
  }
  return true;
}

void WatchReactor::Queue(InventoryEvent event) {
  queue_.push_back(std::move(event));
}

void WatchReactor::FinishOnce(grpc::Status status) {
  if (finished_) return;
  finished_ = true;
  if (wake_id_.has_value()) inventory_->CancelNotify(*wake_id_);
  wake_id_.reset();
  Finish(std::move(status));
}

void WatchReactor::OnWriteDone(bool ok) {
  absl::MutexLock lock(&link_->mu);
  write_in_flight_ = false;
  if (!ok) {  // the watcher went away
    FinishOnce(grpc::Status::OK);
    return;
  }
  Pump();
}

void WatchReactor::OnCancel() {
  absl::MutexLock lock(&link_->mu);
  cancelled_ = true;
  // With a write in flight, its failed completion finishes the stream.
  Pump();
}

void WatchReactor::Revoke() {
  revoked_ = true;
  // With a write in flight, its completion finishes the stream.
  Pump();
}

void WatchReactor::OnDone() {
  {
    absl::MutexLock lock(&link_->mu);
    link_->reactor = nullptr;
    if (wake_id_.has_value()) inventory_->CancelNotify(*wake_id_);
  }
  if (metrics_ != nullptr) metrics_->RecordWatcher(-1);
  delete this;
}

}  // namespace ctxsel::server
