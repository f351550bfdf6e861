// metrics.h: the server's Prometheus metrics, in one place.
//
// Metrics owns typed members built on one prometheus::Registry; components
// take a `Metrics*` that may be null (unit tests), so none of them looks a
// metric up by name. RPCs are counted at the edge by an interceptor
// (MakeRpcInterceptorFactories), not in each handler; state that is a count of
// something the server already holds (nodes by state, active claims) is
// read when Prometheus scrapes (SetFleetSource), not updated on each
// change. base/metrics_endpoint.h serves collectables() over HTTP for
// ctxsel-server --metrics_listen. Names and what to alert on:
// docs/operations.md, "Metrics".
//
//   auto metrics = std::make_shared<Metrics>();
//   builder.experimental().SetInterceptorCreators(
//       MakeRpcInterceptorFactories(metrics.get()));
//   metrics->RecordSelection(SelectionOutcome::kVariant, Policy::kPack);
//   auto endpoint =
//       MetricsEndpoint::Start("127.0.0.1:9464", metrics->collectables());
#ifndef CTXSEL_SERVER_METRICS_METRICS_H_
#define CTXSEL_SERVER_METRICS_METRICS_H_

#include <grpcpp/support/server_interceptor.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/model/model.h"

namespace ctxsel::server {

// How one Select ended, the `outcome` label of ctxsel_selections_total.
enum class SelectionOutcome {
  kVariant,     // a variant on a device
  kBase,        // the kernel's base function on a device
  kNone,        // no device or kernel fits (an error answer)
  kClaimedOut,  // devices fit, but all are claimed to capacity
};

// What the server holds now, read at scrape time.
struct FleetCounts {
  int64_t healthy_nodes = 0;
  int64_t suspect_nodes = 0;
  int64_t healthy_devices = 0;
  int64_t suspect_devices = 0;
  // Devices of live nodes by condition (a device may count in several).
  int64_t degraded_devices = 0;
  int64_t unhealthy_devices = 0;
  int64_t cordoned_devices = 0;
  int64_t draining_devices = 0;
  int64_t active_claims = 0;
  int64_t expired_claims = 0;  // since start: a counter
  int64_t claim_waiters = 0;   // claiming Selects in the wait queue
  // The Placer's static-resolution caches (Placer::CacheStats).
  int64_t resolution_hits = 0;
  int64_t resolution_misses = 0;
  int64_t resolution_rebuilds = 0;
  double resolution_rebuild_seconds = 0;
};

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // What an endpoint serves: the registry and the scrape-time gauges.
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables() const;

  // One finished RPC: ctxsel_rpc_requests_total{method,code} and
  // ctxsel_rpc_duration_seconds{method}. `method` is gRPC's
  // "/package.Service/Method"; past kMaxMethods distinct methods the rest
  // share method="other", so no client can grow the series without bound.
  void RecordRpc(absl::string_view method, grpc::StatusCode code,
                 absl::Duration latency);
  static constexpr int kMaxMethods = 64;

  // ctxsel_selections_total{outcome,policy}.
  void RecordSelection(SelectionOutcome outcome, Policy policy);
  // ctxsel_nodes_expired_total: nodes removed because heartbeats stopped.
  void RecordNodesExpired(int count) { nodes_expired_->Increment(count); }
  // ctxsel_heartbeats_total{answer}: heartbeats received, answered
  // "recorded" or "rereport" (the node or a device is unknown: the agent
  // must report again); when `late` (longer than suspect_after since the
  // stream's previous beat) also ctxsel_heartbeats_late_total.
  void RecordHeartbeat(bool recorded, bool late = false);
  // ctxsel_watchers: `delta` is +1 when a WatchInventory stream starts,
  // -1 when it ends.
  void RecordWatcher(int delta) { watchers_->Increment(delta); }
  // ctxsel_watch_lag_seconds: from an inventory change to the start of its
  // write to one watcher.
  void RecordWatchLag(absl::Duration lag);
  // ctxsel_store_write_duration_seconds and, when !ok,
  // ctxsel_store_write_failures_total; `what` is "variants" or "claims".
  void RecordStoreWrite(absl::string_view what, bool ok,
                        absl::Duration latency);

  // ctxsel_claim_wait_seconds{outcome}: how long one claiming Select
  // waited in the queue (ClaimRequest.wait), by how the wait ended:
  // "granted", "expired" (the wait ran out), "cancelled" (the caller left)
  // or "failed" (another error).
  void RecordClaimWait(absl::string_view outcome, absl::Duration waited);

  // ctxsel_nodes{state} and ctxsel_devices{state} (healthy, suspect),
  // ctxsel_claims_active, ctxsel_claims_expired_total, ctxsel_claim_waiters
  // and the resolution
  // cache's counters
  // (ctxsel_resolution_cache_lookups_total{result}, ctxsel_resolution_
  // rebuilds_total, ctxsel_resolution_rebuild_seconds_total), from `source`
  // at each scrape. Call once, before
  // the endpoint serves; `source` must outlive the scrapes.
  void SetFleetSource(std::function<FleetCounts()> source);

 private:
  class FleetCollector;
  struct RpcSeries {
    prometheus::Histogram* duration = nullptr;
    std::map<grpc::StatusCode, prometheus::Counter*> by_code;
  };

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& rpc_requests_;
  prometheus::Family<prometheus::Histogram>& rpc_duration_;
  prometheus::Family<prometheus::Counter>& selections_;
  prometheus::Counter* nodes_expired_;
  prometheus::Counter* heartbeats_recorded_;
  prometheus::Counter* heartbeats_rereport_;
  prometheus::Counter* heartbeats_late_;
  prometheus::Gauge* watchers_;
  prometheus::Histogram* watch_lag_;
  prometheus::Family<prometheus::Histogram>& store_write_duration_;
  prometheus::Family<prometheus::Counter>& store_write_failures_;
  prometheus::Family<prometheus::Histogram>& claim_wait_;
  std::shared_ptr<FleetCollector> fleet_;

  absl::Mutex mu_;
  std::map<std::string, RpcSeries, std::less<>> rpcs_ ABSL_GUARDED_BY(mu_);
};

// The interceptor factories that feed Metrics::RecordRpc for every call of
// every service (unary and streaming), for ServerBuilder::experimental().
// SetInterceptorCreators. `metrics` must outlive the server.
std::vector<
    std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MakeRpcInterceptorFactories(Metrics* metrics);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_METRICS_METRICS_H_
