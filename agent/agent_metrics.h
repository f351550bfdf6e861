// agent_metrics.h: ctxsel-agent's Prometheus metrics, served by
// `ctxsel-agent --metrics_listen` (base/metrics_endpoint.h). The Reporter
// and main() take an optional pointer (null in unit tests).
//
//   AgentMetrics metrics;
//   metrics.RecordDiscovery(absl::Milliseconds(12));
//   MetricsEndpoint::Start("127.0.0.1:9465", {metrics.registry()});
#ifndef CTXSEL_AGENT_AGENT_METRICS_H_
#define CTXSEL_AGENT_AGENT_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>

#include "absl/time/time.h"

namespace ctxsel::agent {

class AgentMetrics {
 public:
  AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // ctxsel_agent_discovery_duration_seconds: one run of every backend.
  void RecordDiscovery(absl::Duration took);
  // ctxsel_agent_heartbeats_sent_total: heartbeats the server answered.
  void RecordBeat() { beats_->Increment(); }
  // ctxsel_agent_reports_total: full reports the server accepted.
  void RecordReport() { reports_->Increment(); }
  // ctxsel_agent_reconnects_total: failed connections or broken streams,
  // each followed by a backoff and a new attempt.
  void RecordReconnect() { reconnects_->Increment(); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Histogram* discovery_;
  prometheus::Counter* beats_;
  prometheus::Counter* reports_;
  prometheus::Counter* reconnects_;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_AGENT_METRICS_H_
