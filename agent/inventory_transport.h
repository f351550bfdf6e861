// InventoryTransport: how the reporter talks to the server's Inventory
// service, as plain calls on domain values.
//
// GrpcInventoryTransport (grpc_transport.h) implements it over ctxsel.v1;
// unit tests implement it with a script. Keeping gRPC out of the reporter's
// logic lets every reconnection path be tested without a network.
//
//   absl::StatusOr<ReportAnswer> a = transport.ReportNode("n7", devices);
//   std::unique_ptr<HeartbeatStream> beats = transport.OpenHeartbeat();
//   absl::StatusOr<BeatAnswer> b = beats->Beat("n7", devices);
#ifndef CTXSEL_AGENT_INVENTORY_TRANSPORT_H_
#define CTXSEL_AGENT_INVENTORY_TRANSPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "devices/device_info.h"

namespace ctxsel::agent {

// The server's answer to a full report.
struct ReportAnswer {
  absl::Duration heartbeat_interval = absl::ZeroDuration();  // 0: unspecified
  absl::Duration node_ttl = absl::ZeroDuration();
  std::string server_instance;
};

// The server's answer to one heartbeat.
struct BeatAnswer {
  bool rereport = false;  // the server does not know the node: report again
  std::string message;
  absl::Duration heartbeat_interval = absl::ZeroDuration();  // 0: unchanged
};

// One open heartbeat stream. Beat() may block on the network; Cancel() may be
// called from another thread to make a blocked Beat() fail at once.
class HeartbeatStream {
 public:
  virtual ~HeartbeatStream() = default;
  // Sends the utilisation of `devices` and waits for the server's answer. An
  // error means the stream is broken (the server went away).
  virtual absl::StatusOr<BeatAnswer> Beat(
      const std::string& node, const std::vector<DeviceInfo>& devices) = 0;
  virtual void Cancel() = 0;
};

class InventoryTransport {
 public:
  virtual ~InventoryTransport() = default;
  // A full report: replaces everything the server knows about `node`.
  virtual absl::StatusOr<ReportAnswer> ReportNode(
      const std::string& node, const std::vector<DeviceInfo>& devices) = 0;
  virtual std::unique_ptr<HeartbeatStream> OpenHeartbeat() = 0;
  // Removes `node` at once (shutdown).
  virtual absl::Status Deregister(const std::string& node) = 0;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_INVENTORY_TRANSPORT_H_
