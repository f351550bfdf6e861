// watch_reactor.h: one WatchInventory stream on gRPC's callback API.
//
// A watcher holds no server thread while it waits: when it has sent every
// event it asks the Inventory to wake it (Inventory::NotifyAfter), and the
// thread that records the next change starts the next write. Events are
// sent in sequence order, after what Inventory::StartWatch said to send
// first; a watcher that falls further behind than the inventory's event
// history ends with OUT_OF_RANGE (resume it: it will be resynced); one
// whose credential a reload of the tokens file revokes, with
// UNAUTHENTICATED (at once, or once the event being sent is).
//
// Memory per watcher is bounded, whether or not it reads: events wait in
// its queue as the inventory's shared snapshots (each is converted to its
// proto when its write starts), and the queue takes at most
// kMaxRefillBytes of them from the history at a time (a watch's initial
// or resync snapshot is a pointer per node, each node's snapshot shared by
// the watches that start before it changes). A watcher that does not read
// holds that, the one message being written and what gRPC's flow control
// lets into its connection.
//
//   auto link = std::make_shared<ReactorLink<WatchReactor>>();
//   ... grant = authorizer_->AuthorizeStream(..., RevokeThrough(link));
//   absl::StatusOr<WatchStart> start = inventory_->StartWatch(from);
//   if (!start.ok()) ...  // refuse the call
//   return new WatchReactor(link, inventory_, *std::move(start),
//                           *std::move(grant));
#ifndef CTXSEL_SERVER_RPC_WATCH_REACTOR_H_
#define CTXSEL_SERVER_RPC_WATCH_REACTOR_H_

#include <grpcpp/support/server_callback.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "server/access/auth.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"
#include "server/rpc/callback_call.h"

namespace ctxsel::server {

class WatchReactor final : public grpc::ServerWriteReactor<v1::InventoryEvent> {
 public:
  // The most a refill takes from the history at a time (estimated bytes of
  // the snapshots it holds; at least one event).
  static constexpr size_t kMaxRefillBytes = 64 << 10;

  // Starts the stream: `start`'s events first, then every event after its
  // sequence. The reactor deletes itself when the stream is done, and is
  // reached from other threads (the inventory's wakes, a revocation)
  // through `link` until then; its lock guards the reactor's state and is
  // taken before the Inventory's. `grant` is held until then; `metrics`
  // (may be null) counts the watcher and each event's lag.
  WatchReactor(std::shared_ptr<ReactorLink<WatchReactor>> link,
               const Inventory* inventory, WatchStart start,
               Authorizer::StreamGrant grant, Metrics* metrics = nullptr);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;
  // Ends the stream with RevokedStatus(); the caller holds the link's lock.
  void Revoke();

 private:
  using Link = ReactorLink<WatchReactor>;

  // Starts the next write, or asks to be woken when there is nothing to
  // send, or finishes a cancelled stream. Caller holds link_->mu.
  void Pump();
  // Queues the events after cursor_; false (after finishing) on error.
  bool Refill();
  // Queues `event` to be sent; caller holds link_->mu.
  void Queue(InventoryEvent event);
  void FinishOnce(grpc::Status status);

  const std::shared_ptr<Link> link_;
  const Inventory* const inventory_;
  const Authorizer::StreamGrant grant_;
  Metrics* const metrics_;
  // Guarded by link_->mu (not annotated: the analysis cannot follow link_).
  int64_t cursor_ = 0;
  std::deque<InventoryEvent> queue_;
  v1::InventoryEvent writing_;
  bool write_in_flight_ = false;
  bool cancelled_ = false;
  bool revoked_ = false;
  bool finished_ = false;
  std::optional<int64_t> wake_id_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_WATCH_REACTOR_H_
