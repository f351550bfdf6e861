#include "agent/agent_metrics.h"

namespace ctxsel::agent {

AgentMetrics::AgentMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      // Discovery reads sysfs and NVML: milliseconds, up to seconds when a
      // driver is slow.
      discovery_(&prometheus::BuildHistogram()
                      .Name("ctxsel_agent_discovery_duration_seconds")
                      .Help("Time of one device discovery (every backend).")
                      .Register(*registry_)
                      .Add({},
                           prometheus::Histogram::BucketBoundaries{
                               0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5})),
      beats_(&prometheus::BuildCounter()
                  .Name("ctxsel_agent_heartbeats_sent_total")
                  .Help("Heartbeats the server answered.")
                  .Register(*registry_)
                  .Add({})),
      reports_(&prometheus::BuildCounter()
                    .Name("ctxsel_agent_reports_total")
                    .Help("Full node reports the server accepted.")
                    .Register(*registry_)
                    .Add({})),
      reconnects_(&prometheus::BuildCounter()
                       .Name("ctxsel_agent_reconnects_total")
                       .Help("Failed connections or broken heartbeat streams, "
                             "each followed by a new attempt.")
                       .Register(*registry_)
                       .Add({})) {}

void AgentMetrics::RecordDiscovery(absl::Duration took) {
  discovery_->Observe(absl::ToDoubleSeconds(took));
}

}  // namespace ctxsel::agent
