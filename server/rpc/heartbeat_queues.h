// heartbeat_queues.h: Inventory's Heartbeat streams, on gRPC's async API over
// completion queues of their own.
//
// Every other ctxsel.v1 method runs on the callback API (callback_call.h);
// heartbeats do not, because of what an open stream costs a queue. Debian's
// libgrpc 1.51 is built without NDEBUG: each operation that completes
// searches its queue's list of outstanding operations linearly, under the
// queue's mutex. Every open heartbeat stream keeps a read outstanding, and
// on the callback API its close notification too, all on the server's one
// callback queue, so 10,000 agents made every operation of every call —
// Select's included — scan some 20,000 entries under one mutex
// (docs/service.md). Here each stream lives on one of `queues` queues of
// its own, with one outstanding read: a beat scans its queue's share, and
// the callback queue keeps only the short calls'.
//
// A stream holds no thread: each queue has one thread, which handles its
// streams' events one at a time. A beat is read, recorded in the Inventory
// and answered; the answer is ACTION_REREPORT when the inventory does not
// know the node (it expired, or the server restarted) or a device the beat
// names. A stream ends with INVALID_ARGUMENT when a beat names no node or
// another node than its first beat, or carries a utilisation CheckBeat
// (node_report.h) refuses; PERMISSION_DENIED for a node not the caller's
// (Authorizer::CheckNode); RESOURCE_EXHAUSTED when the caller beats faster
// than its limits allow; UNAUTHENTICATED when a reload of the tokens file
// revokes its credential (at once, or once the answer being sent is);
// UNAVAILABLE (STORE_UNAVAILABLE) at the first beat while the replica is
// stale (StaleReplicaStatus), so that its agent fails over to a replica
// that can still write its node for the others.
//
//   HeartbeatQueues heartbeats(&inventory_service, settings, /*queues=*/4);
//   heartbeats.AddTo(builder);              // before BuildAndStart
//   server = builder.BuildAndStart();
//   heartbeats.Start();
//   ...
//   server->Shutdown(deadline);             // streams end, calls drain
//   server->Wait();
//   heartbeats.Stop();                      // after the server, always
#ifndef CTXSEL_SERVER_RPC_HEARTBEAT_QUEUES_H_
#define CTXSEL_SERVER_RPC_HEARTBEAT_QUEUES_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "server/access/auth.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"

namespace ctxsel::server {

// The service type whose Heartbeat is on the async API (RequestHeartbeat)
// and every other method on the callback API. gRPC's generated
// WithAsyncMethod_Heartbeat<CallbackService> would leave Heartbeat a callback
// method: a method marked callback keeps its handler when later marked async.
using InventoryServiceBase = v1::Inventory::WithCallbackMethod_ReportNode<
    v1::Inventory::WithCallbackMethod_Deregister<
        v1::Inventory::WithCallbackMethod_ListNodes<
            v1::Inventory::WithCallbackMethod_ListDevices<
                v1::Inventory::WithCallbackMethod_WatchInventory<
                    v1::Inventory::WithAsyncMethod_Heartbeat<
                        v1::Inventory::Service>>>>>>;

// The answer to one beat: carry on, or re-report (with the reason).
v1::HeartbeatResponse HeartbeatAnswer(const std::string& node,
                                      Inventory::BeatAnswer answer,
                                      absl::Duration interval);

// How a replica behind the store its replicas share (server/replicas/
// replica_sync.h: partitioned from etcd, or etcd without quorum) refuses an
// agent's report and ends its heartbeat stream: its node's record cannot
// reach the other replicas from here, so the agent must go to another.
grpc::Status StaleReplicaStatus();

// What a heartbeat stream needs; every pointer must outlive the queues.
struct HeartbeatSettings {
  // Checks each stream's caller (AuthorizeStream) and holds its limits.
  const Authorizer* authorizer = nullptr;
  Inventory* inventory = nullptr;
  // Told to agents in every answer.
  absl::Duration interval = absl::Seconds(1);
  // Counts each beat by its answer, and late beats; may be null.
  Metrics* metrics = nullptr;
  // While this says true, a beat ends its stream (StaleReplicaStatus); may
  // be null or empty.
  const std::function<bool()>* stale = nullptr;
};

// How many queues `--heartbeat_queues=0` means on a machine of `cores`: one
// per 4 cores, at least 1 and at most 8. Each queue's thread also polls
// gRPC's sockets, which costs more than it saves where cores are few.
int DefaultHeartbeatQueues(int cores);

class HeartbeatQueues {
 public:
  // `service` (which must outlive the queues) is the one registered with
  // the server; `queues` >= 1.
  HeartbeatQueues(InventoryServiceBase* service, HeartbeatSettings settings,
                  int queues);
  // Stop()s, unless Stop() ran.
  ~HeartbeatQueues();

  HeartbeatQueues(const HeartbeatQueues&) = delete;
  HeartbeatQueues& operator=(const HeartbeatQueues&) = delete;

  // Adds the queues to `builder`; call once, before BuildAndStart.
  void AddTo(grpc::ServerBuilder& builder);
  // Once the server has started: waits for streams on every queue.
  void Start();
  // Once the server has shut down (Server::Shutdown has returned): shuts
  // the queues down, drains them and joins their threads. Streams still
  // open were cancelled by the shutdown; their state is freed here.
  void Stop();

  struct Queue;  // one completion queue and its thread

 private:
  const HeartbeatSettings settings_;
  std::vector<std::unique_ptr<Queue>> queues_;
  bool stopped_ = false;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_HEARTBEAT_QUEUES_H_
