// GrpcInventoryTransport: InventoryTransport over the ctxsel.v1 Inventory
// service.
//
// It translates DeviceInfo to ctxsel.v1.Device and gRPC statuses to
// absl::Status, and nothing else; the decisions live in Reporter.
//
//   auto channel = MakeAgentChannel("127.0.0.1:7070", absl::Milliseconds(200));
//   GrpcInventoryTransport transport(channel, "ctxsel-agent 0.1.0");
#ifndef CTXSEL_AGENT_GRPC_TRANSPORT_H_
#define CTXSEL_AGENT_GRPC_TRANSPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "agent/inventory_transport.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace ctxsel::agent {

// A channel to `address` whose own reconnection backoff is capped at
// `max_reconnect` (gRPC's default grows to two minutes, which would keep a
// restarted server's nodes away far longer than a heartbeat or two).
std::shared_ptr<grpc::Channel> MakeAgentChannel(const std::string& address,
                                                absl::Duration max_reconnect);

// The API message for `device`.
v1::Device ToProto(const DeviceInfo& device);

class GrpcInventoryTransport : public InventoryTransport {
 public:
  // Unary calls give up after `rpc_timeout`.
  GrpcInventoryTransport(std::shared_ptr<grpc::Channel> channel,
                         std::string agent_version,
                         absl::Duration rpc_timeout = absl::Seconds(5));

  absl::StatusOr<ReportAnswer> ReportNode(
      const std::string& node, const std::vector<DeviceInfo>& devices) override;
  std::unique_ptr<HeartbeatStream> OpenHeartbeat() override;
  absl::Status Deregister(const std::string& node) override;

 private:
  std::unique_ptr<v1::Inventory::Stub> stub_;
  std::string agent_version_;
  absl::Duration rpc_timeout_;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_GRPC_TRANSPORT_H_
