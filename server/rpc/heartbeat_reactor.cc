#include "server/rpc/heartbeat_reactor.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

v1::HeartbeatResponse HeartbeatAnswer(const std::string& node,
                                      Inventory::BeatAnswer answer,
                                      absl::Duration interval) {
  v1::HeartbeatResponse response;
  *response.mutable_heartbeat_interval() = ToProtoDuration(interval);
  if (answer == Inventory::BeatAnswer::kUnknownNode) {
    response.set_action(v1::HeartbeatResponse::ACTION_REREPORT);
    response.set_message(absl::StrCat("unknown node '", node, "': re-report"));
  } else if (answer == Inventory::BeatAnswer::kUnknownDevice) {
    response.set_action(v1::HeartbeatResponse::ACTION_REREPORT);
    response.set_message(absl::StrCat("node '", node,
                                      "' names a device it did not report: "
                                      "re-report"));
  }
  return response;
}

grpc::Status StaleReplicaStatus() {
  return ToGrpcStatus(WithErrorInfo(
      absl::UnavailableError(
          "this replica is stale (cut off from the store its replicas "
          "share, or the store has no quorum): report to another replica"),
      kReasonStoreUnavailable));
}

HeartbeatReactor::HeartbeatReactor(
    std::shared_ptr<ReactorLink<HeartbeatReactor>> link, Inventory* inventory,
    absl::Duration interval, Authorizer::StreamGrant grant,
    PrincipalLimits* limits, Metrics* metrics,
    const std::function<bool()>* stale)
    : link_(std::move(link)),
      inventory_(inventory),
      interval_(interval),
      grant_(std::move(grant)),
      limits_(limits),
      metrics_(metrics),
      stale_(stale),
      last_beat_(absl::Now()) {
  absl::MutexLock lock(&link_->mu);
  link_->reactor = this;
  StartRead(&beat_);
}

void HeartbeatReactor::OnReadDone(bool ok) {
  absl::MutexLock lock(&link_->mu);
  if (finished_) return;
  if (!ok) {  // the agent closed the stream or went away
    FinishOnce(grpc::Status::OK);
    return;
  }
  HandleBeat();
}

void HeartbeatReactor::HandleBeat() {
  if (node_.empty()) node_ = beat_.node();
  if (beat_.node().empty() || beat_.node() != node_) {
    FinishOnce(ToGrpcStatus(FieldViolation(
        "node", absl::StrCat("'", beat_.node(),
                             "' (a heartbeat stream carries one non-empty "
                             "node, first '",
                             node_, "')"))));
    return;
  }
  if (absl::Status s = Authorizer::CheckNode(grant_.principal(), node_);
      !s.ok()) {
    FinishOnce(ToGrpcStatus(s));
    return;
  }
  if (absl::Status s = limits_->Take(Budget::kHeartbeat, node_); !s.ok()) {
    FinishOnce(ToGrpcStatus(s));
    return;
  }
  if (stale_ != nullptr && *stale_ && (*stale_)()) {
    FinishOnce(StaleReplicaStatus());
    return;
  }
  // Assigned in place: once the stream has beaten, the ids' buffers are
  // reused and a beat allocates nothing here.
  utilisation_.resize(beat_.utilisation_size());
  for (int i = 0; i < beat_.utilisation_size(); ++i) {
    const v1::DeviceUtilisation& u = beat_.utilisation(i);
    utilisation_[i].first.assign(u.device_id());
    utilisation_[i].second = u.utilisation();
  }
  absl::StatusOr<Inventory::BeatAnswer> answer =
      inventory_->Heartbeat(node_, utilisation_);
  if (!answer.ok()) {
    FinishOnce(ToGrpcStatus(answer.status()));
    return;
  }
  if (metrics_ != nullptr) {
    const absl::Time now = absl::Now();
    metrics_->RecordHeartbeat(
        *answer == Inventory::BeatAnswer::kRecorded,
        now - last_beat_ > inventory_->options().suspect_after);
    last_beat_ = now;
  }
  answer_ = HeartbeatAnswer(node_, *answer, interval_);
  write_in_flight_ = true;
  StartWrite(&answer_);
}

void HeartbeatReactor::OnWriteDone(bool ok) {
  absl::MutexLock lock(&link_->mu);
  write_in_flight_ = false;
  if (finished_) return;
  if (revoked_) {
    FinishOnce(RevokedStatus());
    return;
  }
  if (!ok) {
    FinishOnce(grpc::Status::OK);
    return;
  }
  StartRead(&beat_);
}

void HeartbeatReactor::Revoke() {
  if (finished_) return;
  revoked_ = true;
  // A read in flight ends with the stream; a write is let complete first.
  if (!write_in_flight_) FinishOnce(RevokedStatus());
}

void HeartbeatReactor::FinishOnce(grpc::Status status) {
  if (finished_) return;
  finished_ = true;
  Finish(std::move(status));
}

void HeartbeatReactor::OnDone() {
  {
    absl::MutexLock lock(&link_->mu);
    link_->reactor = nullptr;
  }
  delete this;
}

}  // namespace ctxsel::server
