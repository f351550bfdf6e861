#include "server/rpc/heartbeat_reactor.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

v1::HeartbeatResponse HeartbeatAnswer(const std::string& node,
                                      Inventory::BeatAnswer answer,
                                      absl::Duration interval) {
  v1::HeartbeatResponse response;
  response.set_heartbeat_interval_ms(absl::ToInt64Milliseconds(interval));
  if (answer == Inventory::BeatAnswer::kUnknownNode) {
    response.set_action(v1::HeartbeatResponse::REREPORT);
    response.set_message(absl::StrCat("unknown node '", node, "': re-report"));
  } else if (answer == Inventory::BeatAnswer::kUnknownDevice) {
    response.set_action(v1::HeartbeatResponse::REREPORT);
    response.set_message(absl::StrCat("node '", node,
                                      "' names a device it did not report: "
                                      "re-report"));
  }
  return response;
}

HeartbeatReactor::HeartbeatReactor(Inventory* inventory,
                                   absl::Duration interval, Principal caller,
                                   PrincipalLimits* limits,
                                   PrincipalLimits::Stream stream,
                                   Metrics* metrics)
    : inventory_(inventory),
      interval_(interval),
      caller_(std::move(caller)),
      limits_(limits),
      stream_(std::move(stream)),
      metrics_(metrics),
      last_beat_(absl::Now()) {
  StartRead(&beat_);
}

void HeartbeatReactor::OnReadDone(bool ok) {
  if (!ok) {  // the agent closed the stream or went away
    Finish(grpc::Status::OK);
    return;
  }
  if (node_.empty()) node_ = beat_.node();
  if (beat_.node().empty() || beat_.node() != node_) {
    Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("node: '", beat_.node(),
                                     "' (a heartbeat stream carries one "
                                     "non-empty node, first '",
                                     node_, "')")));
    return;
  }
  if (absl::Status s = Authorizer::CheckNode(caller_, node_); !s.ok()) {
    Finish(ToGrpcStatus(s));
    return;
  }
  if (absl::Status s = limits_->Take(Budget::kHeartbeat, node_); !s.ok()) {
    Finish(ToGrpcStatus(s));
    return;
  }
  std::vector<std::pair<std::string, double>> utilisation;
  utilisation.reserve(beat_.utilisation_size());
  for (const v1::DeviceUtilisation& u : beat_.utilisation()) {
    utilisation.emplace_back(u.device_id(), u.utilisation());
  }
  absl::StatusOr<Inventory::BeatAnswer> answer =
      inventory_->Heartbeat(node_, utilisation);
  if (!answer.ok()) {
    Finish(ToGrpcStatus(answer.status()));
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
  StartWrite(&answer_);
}

void HeartbeatReactor::OnWriteDone(bool ok) {
  if (!ok) {
    Finish(grpc::Status::OK);
    return;
  }
  StartRead(&beat_);
}

}  // namespace ctxsel::server
