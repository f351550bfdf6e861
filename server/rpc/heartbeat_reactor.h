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
// than its limits allow; UNAUTHENTICATED when a reload of the tokens file
// revokes its credential (at once, or once the answer being sent is);
// UNAVAILABLE (STORE_UNAVAILABLE) at the first beat while the replica is
// stale (StaleReplicaStatus), so that its agent fails over to a replica
// that can still write its node for the others.
//
//   // InventoryService::Heartbeat:
//   auto link = std::make_shared<ReactorLink<HeartbeatReactor>>();
//   absl::StatusOr<Authorizer::StreamGrant> grant =
//       authorizer_->AuthorizeStream(*context, "Inventory/Heartbeat",
//                                    RevokeThrough(link));
//   if (!grant.ok()) ...  // refuse the stream
//   return new HeartbeatReactor(link, inventory_, interval,
//                               *std::move(grant), &authorizer_->limits(),
//                               metrics, &options_.store_stale);
#ifndef CTXSEL_SERVER_RPC_HEARTBEAT_REACTOR_H_
#define CTXSEL_SERVER_RPC_HEARTBEAT_REACTOR_H_

#include <grpcpp/support/server_callback.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "server/access/auth.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"
#include "server/rpc/callback_call.h"

namespace ctxsel::server {

// The answer to one beat: carry on, or re-report (with the reason).
v1::HeartbeatResponse HeartbeatAnswer(const std::string& node,
                                      Inventory::BeatAnswer answer,
                                      absl::Duration interval);

// How a replica behind the store its replicas share (server/replicas/
// replica_sync.h: partitioned from etcd, or etcd without quorum) refuses an
// agent's report and ends its heartbeat stream: its node's record cannot
// reach the other replicas from here, so the agent must go to another.
grpc::Status StaleReplicaStatus();

class HeartbeatReactor final
    : public grpc::ServerBidiReactor<v1::HeartbeatRequest,
                                     v1::HeartbeatResponse> {
 public:
  // Starts reading; the reactor deletes itself when the stream is done, and
  // is reached from other threads through `link` until then. Its caller
  // (the principal of `grant`, which the reactor holds until done) may beat
  // only for its own node (Authorizer::CheckNode), at most as often as
  // `limits` allow. `metrics` (may be null) counts each beat by its answer,
  // and late beats. While `stale` (may be null or empty, and must outlive
  // the reactor) says true, a beat ends the stream (StaleReplicaStatus).
  HeartbeatReactor(std::shared_ptr<ReactorLink<HeartbeatReactor>> link,
                   Inventory* inventory, absl::Duration interval,
                   Authorizer::StreamGrant grant, PrincipalLimits* limits,
                   Metrics* metrics = nullptr,
                   const std::function<bool()>* stale = nullptr);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;
  // Ends the stream with RevokedStatus(); the caller holds the link's lock.
  void Revoke();

 private:
  // Both with the link's lock held.
  void HandleBeat();
  void FinishOnce(grpc::Status status);

  const std::shared_ptr<ReactorLink<HeartbeatReactor>> link_;
  Inventory* const inventory_;
  const absl::Duration interval_;
  const Authorizer::StreamGrant grant_;
  PrincipalLimits* const limits_;
  Metrics* const metrics_;
  const std::function<bool()>* const stale_;
  // Guarded by link_->mu (not annotated: the analysis cannot follow link_).
  // The stream's start or its previous beat: a beat later than the
  // inventory's suspect_after after it is counted late.
  absl::Time last_beat_;
  std::string node_;  // the node of the first beat
  // One read or one write is in flight at a time.
  v1::HeartbeatRequest beat_;
  v1::HeartbeatResponse answer_;
  std::vector<DeviceBeat> utilisation_;  // beat_'s, reused beat to beat
  bool write_in_flight_ = false;
  bool revoked_ = false;
  bool finished_ = false;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_HEARTBEAT_REACTOR_H_
