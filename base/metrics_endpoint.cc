#include "base/metrics_endpoint.h"

#include <exception>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/host_port.h"
#include "base/status_macros.h"

namespace ctxsel {

absl::Status ValidateMetricsAddress(const std::string& address) {
  absl::StatusOr<HostPort> split = ParseHostPort(address);
  if (!split.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics_listen: '", address, "': ", split.status().message()));
  }
  if (split->host.empty()) {
    // civetweb reads a bare port as "every address"; say so explicitly.
    return absl::InvalidArgumentError(
        absl::StrCat("metrics_listen: '", address,
                     "': name the host (127.0.0.1 to keep the metrics local)"));
  }
  return absl::OkStatus();
}

bool IsLoopbackAddress(const std::string& address) {
  absl::StatusOr<HostPort> split = ParseHostPort(address);
  if (!split.ok()) return false;
  return split->host == "localhost" || split->host == "::1" ||
         absl::StartsWith(split->host, "127.");
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address,
    const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables) {
  CTXSEL_RETURN_IF_ERROR(ValidateMetricsAddress(address));
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint);
  try {
    // civetweb serves a connection per thread and waits request_timeout_ms
    // for its request: with one thread, one client that connects and sends
    // nothing held off every scrape (10 s+). A few threads and a short wait
    // keep idle clients from blocking Prometheus.
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", address, "num_threads", "4",
                                 "request_timeout_ms", "2000"});
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "metrics_listen: cannot listen on ", address, ": ", e.what()));
  }
  for (const auto& collectable : collectables) {
    endpoint->exposer_->RegisterCollectable(collectable);
  }
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  endpoint->port_ = ports.empty() ? 0 : ports.front();
  return endpoint;
}

}  // namespace ctxsel
