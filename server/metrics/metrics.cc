#include "server/metrics/metrics.h"

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include "absl/strings/string_view.h"
#include "server/model/policy.h"

namespace ctxsel::server {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildHistogram;

// Latency buckets in seconds, 100 µs to 10 s: a Select answers in tens of
// microseconds, a store write with fsync in milliseconds.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const buckets =
      new prometheus::Histogram::BucketBoundaries{
          0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};
  return *buckets;
}

absl::string_view OutcomeName(SelectionOutcome outcome) {
  switch (outcome) {
    case SelectionOutcome::kVariant:
      return "variant";
    case SelectionOutcome::kBase:
      return "base";
    case SelectionOutcome::kNone:
      return "none";
    case SelectionOutcome::kClaimedOut:
      return "claimed_out";
  }
  return "unknown";
}

// gRPC's canonical code names, as in grpc_status_code docs ("OK",
// "NOT_FOUND", ...): the label values Prometheus users expect.
absl::string_view CodeName(grpc::StatusCode code) {
  static constexpr absl::string_view kNames[] = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED",
  };
  const int index = static_cast<int>(code);
  if (index < 0 || index >= static_cast<int>(std::size(kNames))) {
    return "UNKNOWN";
  }
  return kNames[index];
}

prometheus::MetricFamily Gauges(
    std::string name, std::string help,
    std::vector<std::pair<std::string, int64_t>> by_state) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Gauge;
  for (auto& [state, value] : by_state) {
    prometheus::ClientMetric metric;
    if (!state.empty()) metric.label.push_back({"state", state});
    metric.gauge.value = static_cast<double>(value);
    family.metric.push_back(std::move(metric));
  }
  return family;
}

prometheus::MetricFamily Counters(
    std::string name, std::string help, const std::string& label,
    std::vector<std::pair<std::string, double>> values) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Counter;
  for (auto& [label_value, value] : values) {
    prometheus::ClientMetric metric;
    if (!label.empty()) metric.label.push_back({label, label_value});
    metric.counter.value = value;
    family.metric.push_back(std::move(metric));
  }
  return family;
}

// Times one call from its creation to the status it sends.
class RpcInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcInterceptor(Metrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(absl::Now()) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->RecordRpc(method_, methods->GetSendStatus().error_code(),
                          absl::Now() - start_);
    }
    methods->Proceed();
  }

 private:
  Metrics* const metrics_;
  const std::string method_;
  const absl::Time start_;
};

class RpcInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcInterceptorFactory(Metrics* metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RpcInterceptor(metrics_, info->method());
  }

 private:
  Metrics* const metrics_;
};

}  // namespace

class Metrics::FleetCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    if (!source_) return {};
    const FleetCounts counts = source_();
    return {
        Gauges("ctxsel_nodes", "Live nodes by state.",
               {{"healthy", counts.healthy_nodes},
                {"suspect", counts.suspect_nodes}}),
        Gauges("ctxsel_devices", "Devices of live nodes by their node's state.",
               {{"healthy", counts.healthy_devices},
                {"suspect", counts.suspect_devices}}),
        Gauges("ctxsel_device_conditions",
               "Devices of live nodes that are not fully available, by "
               "condition: the agent's health (degraded, unhealthy) and "
               "operators' cordons (cordoned, draining).",
               {{"degraded", counts.degraded_devices},
                {"unhealthy", counts.unhealthy_devices},
                {"cordoned", counts.cordoned_devices},
                {"draining", counts.draining_devices}}),
        Gauges("ctxsel_claims_active", "Claims not yet released or expired.",
               {{"", counts.active_claims}}),
        Gauges("ctxsel_claim_waiters",
               "Claiming Selects waiting in this server's queue.",
               {{"", counts.claim_waiters}}),
        Counters("ctxsel_claims_expired_total",
                 "Claims that expired instead of being released.", "",
                 {{"", static_cast<double>(counts.expired_claims)}}),
        Counters("ctxsel_resolution_cache_lookups_total",
                 "Static-resolution cache lookups by Select and Explain, "
                 "by result (hit, miss).",
                 "result",
                 {{"hit", static_cast<double>(counts.resolution_hits)},
                  {"miss", static_cast<double>(counts.resolution_misses)}}),
        Counters("ctxsel_resolution_rebuilds_total",
                 "Up-front static-resolution rebuilds after variants or "
                 "device classes changed.",
                 "", {{"", static_cast<double>(counts.resolution_rebuilds)}}),
        Counters("ctxsel_resolution_rebuild_seconds_total",
                 "Time spent in those rebuilds.", "",
                 {{"", counts.resolution_rebuild_seconds}}),
    };
  }

  std::function<FleetCounts()> source_;
};

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      rpc_requests_(BuildCounter()
                        .Name("ctxsel_rpc_requests_total")
                        .Help("RPCs finished, by method and status code.")
                        .Register(*registry_)),
      rpc_duration_(BuildHistogram()
                        .Name("ctxsel_rpc_duration_seconds")
                        .Help("Time from an RPC's start to its status; for a "
                              "stream, its whole life.")
                        .Register(*registry_)),
      selections_(BuildCounter()
                      .Name("ctxsel_selections_total")
                      .Help("Select calls by outcome (variant, base, none, "
                            "claimed_out) and placement policy.")
                      .Register(*registry_)),
      nodes_expired_(&BuildCounter()
                          .Name("ctxsel_nodes_expired_total")
                          .Help("Nodes removed because their heartbeats "
                                "stopped.")
                          .Register(*registry_)
                          .Add({})),
      heartbeats_recorded_(nullptr),
      heartbeats_rereport_(nullptr),
      heartbeats_late_(&BuildCounter()
                            .Name("ctxsel_heartbeats_late_total")
                            .Help("Heartbeats that came longer than "
                                  "suspect_after after the stream's previous "
                                  "one.")
                            .Register(*registry_)
                            .Add({})),
      watchers_(&prometheus::BuildGauge()
                     .Name("ctxsel_watchers")
                     .Help("Open WatchInventory streams.")
                     .Register(*registry_)
                     .Add({})),
      watch_lag_(&BuildHistogram()
                      .Name("ctxsel_watch_lag_seconds")
                      .Help("From an inventory change to the start of its "
                            "write to one watcher.")
                      .Register(*registry_)
                      .Add({}, LatencyBuckets())),
      store_write_duration_(BuildHistogram()
                                .Name("ctxsel_store_write_duration_seconds")
                                .Help("Durable store writes (commit and "
                                      "fsync), by what they write.")
                                .Register(*registry_)),
      store_write_failures_(BuildCounter()
                                .Name("ctxsel_store_write_failures_total")
                                .Help("Durable store writes that failed "
                                      "(nothing was stored).")
                                .Register(*registry_)),
      claim_wait_(BuildHistogram()
                      .Name("ctxsel_claim_wait_seconds")
                      .Help("Time claiming Selects waited in the queue, by "
                            "outcome (granted, expired, cancelled, failed).")
                      .Register(*registry_)),
      fleet_(std::make_shared<FleetCollector>()) {
  auto& heartbeats = BuildCounter()
                         .Name("ctxsel_heartbeats_total")
                         .Help(
                             "Heartbeats received, by answer: recorded, or "
                             "rereport (node or device unknown).")
                         .Register(*registry_);
  heartbeats_recorded_ = &heartbeats.Add({{"answer", "recorded"}});
  heartbeats_rereport_ = &heartbeats.Add({{"answer", "rereport"}});
  for (Policy policy : AllPolicies()) {
    for (SelectionOutcome outcome :
         {SelectionOutcome::kVariant, SelectionOutcome::kBase,
          SelectionOutcome::kNone, SelectionOutcome::kClaimedOut}) {
      // Every series exists from zero, so rates and alerts see it.
      selections_.Add({{"outcome", std::string(OutcomeName(outcome))},
                       {"policy", std::string(PolicyName(policy))}});
    }
  }
}

std::vector<std::weak_ptr<prometheus::Collectable>> Metrics::collectables()
    const {
  return {registry_, fleet_};
}

void Metrics::RecordRpc(absl::string_view method, grpc::StatusCode code,
                        absl::Duration latency) {
  prometheus::Counter* counter = nullptr;
  prometheus::Histogram* duration = nullptr;
  {
    absl::MutexLock lock(&mu_);
    auto it = rpcs_.find(method);
    if (it == rpcs_.end()) {
      const std::string label = static_cast<int>(rpcs_.size()) < kMaxMethods
                                    ? std::string(method)
                                    : "other";
      it = rpcs_.find(label);
      if (it == rpcs_.end()) {
        it = rpcs_.emplace(label, RpcSeries{}).first;
        it->second.duration =
            &rpc_duration_.Add({{"method", label}}, LatencyBuckets());
      }
    }
    RpcSeries& series = it->second;
    prometheus::Counter*& by_code = series.by_code[code];
    if (by_code == nullptr) {
      by_code = &rpc_requests_.Add(
          {{"method", it->first}, {"code", std::string(CodeName(code))}});
    }
    counter = by_code;
    duration = series.duration;
  }
  counter->Increment();
  duration->Observe(absl::ToDoubleSeconds(latency));
}

void Metrics::RecordSelection(SelectionOutcome outcome, Policy policy) {
  selections_
      .Add({{"outcome", std::string(OutcomeName(outcome))},
            {"policy", std::string(PolicyName(policy))}})
      .Increment();
}

void Metrics::RecordHeartbeat(bool recorded, bool late) {
  (recorded ? heartbeats_recorded_ : heartbeats_rereport_)->Increment();
  if (late) heartbeats_late_->Increment();
}

void Metrics::RecordWatchLag(absl::Duration lag) {
  watch_lag_->Observe(absl::ToDoubleSeconds(lag));
}

void Metrics::RecordStoreWrite(absl::string_view what, bool ok,
                               absl::Duration latency) {
  const std::string label(what);
  store_write_duration_.Add({{"what", label}}, LatencyBuckets())
      .Observe(absl::ToDoubleSeconds(latency));
  if (!ok) store_write_failures_.Add({{"what", label}}).Increment();
}

void Metrics::RecordClaimWait(absl::string_view outcome,
                              absl::Duration waited) {
  // Waits last seconds to hours, not microseconds.
  static const auto* const buckets =
      new prometheus::Histogram::BucketBoundaries{
          0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600};
  claim_wait_.Add({{"outcome", std::string(outcome)}}, *buckets)
      .Observe(absl::ToDoubleSeconds(waited));
}

void Metrics::SetFleetSource(std::function<FleetCounts()> source) {
  fleet_->source_ = std::move(source);
}

std::vector<
    std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MakeRpcInterceptorFactories(Metrics* metrics) {
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      factories;
  factories.push_back(std::make_unique<RpcInterceptorFactory>(metrics));
  return factories;
}

}  // namespace ctxsel::server
