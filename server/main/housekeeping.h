// housekeeping.h: the server's background thread. It marks nodes whose
// heartbeats are overdue as suspect, expires those whose heartbeats
// stopped, logs one line per inventory change (requests are not logged),
// and ticks the ClaimBook: expired claims and waits that ran out end, and
// waiting claims are retried after an expiry or a fleet change; and reads
// the operators' cordons again (another replica's, with etcd).
//
//   Housekeeping housekeeping(&inventory, &claims);  // runs until destroyed
#ifndef CTXSEL_SERVER_MAIN_HOUSEKEEPING_H_
#define CTXSEL_SERVER_MAIN_HOUSEKEEPING_H_

#include <functional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "server/claims/claims.h"
#include "server/claims/cordons.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"

namespace ctxsel::server {

class Housekeeping {
 public:
  // Starts the thread; it checks for suspect and expired nodes every TTL / 4
  // (at least every 50 ms, at most every second), and calls
  // claims->Tick() as often (`claims` may be null). `metrics` (may be null)
  // counts the expired nodes; `cordons` (may be null) is reloaded every
  // tick. While `stale` (may be empty) says true (the replica is stale, or
  // not yet following the nodes' watch again), no node is marked suspect
  // or expired: a stale replica refuses its agents' beats so that they go
  // to a replica that can write their nodes (heartbeat_queues.h), and
  // answers from the last state it had, its nodes included, until it is in
  // step again (with etcd away altogether, every replica is stale and no
  // agent's beat is taken anywhere). The first tick in step again counts
  // every node as heard from then (Inventory::ResetSilence): the silence
  // was the replica's doing, and its agents, rotating over their replicas,
  // report again within a TTL instead of finding their nodes expired.
  explicit Housekeeping(Inventory* inventory, ClaimBook* claims = nullptr,
                        Metrics* metrics = nullptr,
                        CordonBook* cordons = nullptr,
                        std::function<bool()> stale = nullptr);
  // Stops and joins the thread.
  ~Housekeeping();
  Housekeeping(const Housekeeping&) = delete;
  Housekeeping& operator=(const Housekeeping&) = delete;

 private:
  void Run();

  Inventory* const inventory_;
  ClaimBook* const claims_;
  Metrics* const metrics_;
  CordonBook* const cordons_;
  const std::function<bool()> stale_;
  absl::Notification stop_;
  std::thread thread_;
};

// One log line for an inventory change, e.g. "node n1 added: 9 device(s)
// (reported)"; the node id and reason are escaped (LogSafe).
std::string DescribeEvent(const InventoryEvent& event);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MAIN_HOUSEKEEPING_H_
