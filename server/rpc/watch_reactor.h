// watch_reactor.h: one WatchInventory stream on gRPC's callback API.
//
// A watcher holds no server thread while it waits: when it has sent every
// event it asks the Inventory to wake it (Inventory::NotifyAfter), and the
// thread that records the next change starts the next write. Events are
// sent in sequence order, after what Inventory::StartWatch said to send
// first; a watcher that falls further behind than the inventory's event
// history ends with OUT_OF_RANGE (resume it: it will be resynced).
//
//   absl::StatusOr<WatchStart> start = inventory_->StartWatch(from);
//   if (!start.ok()) ...  // refuse the call
//   return new WatchReactor(inventory_, *std::move(start), stream);
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
#include "server/access/principal_limits.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"

namespace ctxsel::server {

class WatchReactor final : public grpc::ServerWriteReactor<v1::InventoryEvent> {
 public:
  // Starts the stream: `start`'s events first, then every event after its
  // sequence. The reactor deletes itself when the stream is done. `stream`
  // counts against its principal's stream limit until then; `metrics` (may
  // be null) counts the watcher and each event's lag.
  WatchReactor(const Inventory* inventory, WatchStart start,
               PrincipalLimits::Stream stream, Metrics* metrics = nullptr);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // What the inventory's wake callback holds: it may run on another thread
  // until OnDone has cut the link, so it never touches a deleted reactor.
  struct Link {
    absl::Mutex mu;  // guards the reactor's state too; before Inventory's
    WatchReactor* reactor ABSL_GUARDED_BY(mu);
  };

  // Starts the next write, or asks to be woken when there is nothing to
  // send, or finishes a cancelled stream. Caller holds link_->mu.
  void Pump();
  // Queues the events after cursor_; false (after finishing) on error.
  bool Refill();
  // Queues `event` to be sent; caller holds link_->mu.
  void Queue(const InventoryEvent& event);
  void FinishOnce(grpc::Status status);

  const Inventory* const inventory_;
  const PrincipalLimits::Stream stream_;
  Metrics* const metrics_;
  const std::shared_ptr<Link> link_;
  // Guarded by link_->mu (not annotated: the analysis cannot follow link_).
  int64_t cursor_ = 0;
  std::deque<v1::InventoryEvent> queue_;
  // When each queued event happened, for its lag when it is sent.
  std::deque<absl::Time> queued_at_;
  v1::InventoryEvent writing_;
  bool write_in_flight_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
  std::optional<int64_t> wake_id_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_WATCH_REACTOR_H_
