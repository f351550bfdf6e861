#include "bench/load/agent.h"

#include "absl/time/clock.h"
#include "base/proto_time.h"

namespace ctxsel::load {

void Agent::Open(v1::Inventory::Stub* stub) {
  stub->async()->Heartbeat(&context_, this);
  StartRead(&answer_);
  StartCall();
}

bool Agent::Beat(double utilisation) {
  {
    absl::MutexLock lock(&mu_);
    if (writing_ || done_) return false;
    writing_ = true;
    sent_ = absl::Now();
  }
  beat_.Clear();
  beat_.set_node(node_.id());
  for (const v1::Device& d : node_.devices()) {
    v1::DeviceUtilisation* u = beat_.add_utilisation();
    u->set_device_id(d.id());
    u->set_utilisation(utilisation);
  }
  beats_sent_.fetch_add(1);
  // Not under mu_: the write's reaction takes it.
  StartWrite(&beat_);
  return true;
}

void Agent::OnWriteDone(bool /*ok*/) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
}

void Agent::OnReadDone(bool ok) {
  if (!ok) return;  // the stream is ending; OnDone follows
  {
    absl::MutexLock lock(&mu_);
    latencies_.Add(absl::Now() - sent_, true);
  }
  beats_answered_.fetch_add(1);
  interval_ms_.store(absl::ToInt64Milliseconds(
      FromProtoDuration(answer_.heartbeat_interval())));
  if (answer_.action() == v1::HeartbeatResponse::ACTION_REREPORT) {
    rereport_.store(true);
  }
  StartRead(&answer_);
}

void Agent::OnDone(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    done_ = true;
  }
  if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
    failed_.store(true);
  }
  ended_.Notify();
}

bool Agent::Close(absl::Duration timeout) {
  context_.TryCancel();
  return ended_.WaitForNotificationWithTimeout(timeout);
}

void Agent::AddLatencies(LatencyRecorder& out) const {
  absl::MutexLock lock(&mu_);
  for (absl::Duration d : latencies_.latencies()) out.Add(d, true);
}

}  // namespace ctxsel::load
