// heartbeat_reactor.h: one agent's Heartbeat stream on gRPC's callback API.
//
// A stream holds no server thread: each beat is read, recorded in the
// Inventory and answered from gRPC's callback threads, one beat at a time.
// The answer is ACTION_REREPORT when the inventory does not know the node (it
// expired, or the server restarted) or a device the beat names. A stream
// ends with INVALID_ARGUMENT when a beat names no node or another node than
// its first beat, or carries a utilisation CheckBeat (node_report.h)
// refuses; PERMISSION_DENIED for a node not the caller's
// (Authorizer::CheckNode); RESOURCE_EXHAUSTED when the caller beats faster
// than its limits allow.
//
//   // InventoryService::Heartbeat, once the caller is authorized and its
//   // stream counted (PrincipalLimits::OpenStream):
//   return new HeartbeatReactor(inventory_, options_.heartbeat_interval,
//                               *std::move(who), &authorizer_->limits(),
//                               *std::move(stream), options_.metrics);
#ifndef CTXSEL_SERVER_RPC_HEARTBEAT_REACTOR_H_
#define CTXSEL_SERVER_RPC_HEARTBEAT_REACTOR_H_

#include <grpcpp/support/server_callback.h>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "server/access/auth.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"

namespace ctxsel::server {

// The answer to one beat: carry on, or re-report (with the reason).
v1::HeartbeatResponse HeartbeatAnswer(const std::string& node,
                                      Inventory::BeatAnswer answer,
                                      absl::Duration interval);

class HeartbeatReactor final
    : public grpc::ServerBidiReactor<v1::HeartbeatRequest,
                                     v1::HeartbeatResponse> {
 public:
  // Starts reading; the reactor deletes itself when the stream is done.
  // `caller` may beat only for its own node (Authorizer::CheckNode), at
  // most as often as `limits` allow; `stream` counts against its stream
  // limit until the reactor is done. `metrics` (may be null) counts each
  // beat by its answer, and late beats.
  HeartbeatReactor(Inventory* inventory, absl::Duration interval,
                   Principal caller, PrincipalLimits* limits,
                   PrincipalLimits::Stream stream, Metrics* metrics = nullptr);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  Inventory* const inventory_;
  const absl::Duration interval_;
  const Principal caller_;
  PrincipalLimits* const limits_;
  const PrincipalLimits::Stream stream_;
  Metrics* const metrics_;
  // The stream's start or its previous beat: a beat later than the
  // inventory's suspect_after after it is counted late.
  absl::Time last_beat_;
  std::string node_;  // the node of the first beat
  // One read or one write is in flight at a time, so these need no lock.
  v1::HeartbeatRequest beat_;
  v1::HeartbeatResponse answer_;
  std::vector<DeviceBeat> utilisation_;  // beat_'s, reused beat to beat
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_HEARTBEAT_REACTOR_H_
