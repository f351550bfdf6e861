// metrics_endpoint.h: an HTTP endpoint serving Prometheus collectables at
// /metrics in the text format (prometheus-cpp's Exposer), for the
// --metrics_listen flag of ctxsel-server and ctxsel-agent.
//
// Unauthenticated by design, like most exporters: bind it to loopback (as
// the systemd units do; the flag is off by default) or a management
// network; docs/operations.md, "Metrics".
//
//   absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
//       MetricsEndpoint::Start("127.0.0.1:9464", {registry});
//   int port = (*endpoint)->port();  // the chosen one for port 0
#ifndef CTXSEL_BASE_METRICS_ENDPOINT_H_
#define CTXSEL_BASE_METRICS_ENDPOINT_H_

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ctxsel {

class MetricsEndpoint {
 public:
  // Listens on `address` (host:port; port 0 picks a free one) and serves
  // `collectables` (a few threads; a client that sends no request within
  // 2 s is dropped, so idle clients do not hold off scrapes), which their owner
  // keeps alive while the endpoint runs. InvalidArgumentError naming
  // metrics_listen for an address that is not host:port or names no host
  // (ValidateMetricsAddress()); UnavailableError when it cannot listen.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address,
      const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables);

  // The bound port.
  int port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

// Checks that `address` is host:port with a host ("*" or an empty one
// would listen everywhere) and a port in 0..65535, the form Start() takes;
// InvalidArgumentError naming metrics_listen otherwise.
absl::Status ValidateMetricsAddress(const std::string& address);

// Whether `address` (host:port) is on loopback (127.0.0.0/8, ::1,
// localhost), where only this machine can scrape; callers warn otherwise.
bool IsLoopbackAddress(const std::string& address);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_METRICS_ENDPOINT_H_
