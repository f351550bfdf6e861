// GrpcInventoryTransport: InventoryTransport over the ctxsel.v1 Inventory
// service.
//
// It translates DeviceInfo to ctxsel.v1.Device and gRPC statuses to
// absl::Status, and nothing else; the decisions live in Reporter.
//
//   GrpcInventoryTransport transport(
//       [&] {
//         return MakeAgentChannel("ctxsel:7070", credentials,
//                                 absl::Seconds(1));
//       },
//       "ctxsel-agent 0.1.0");
#ifndef CTXSEL_AGENT_GRPC_TRANSPORT_H_
#define CTXSEL_AGENT_GRPC_TRANSPORT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/inventory_transport.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace ctxsel::agent {

// A channel to `address` with `credentials` (base/channel_credentials.h) whose
// own reconnection backoff is capped at `max_reconnect` (gRPC's default
// grows to two minutes, which would keep a restarted server's nodes away
// far longer than a heartbeat or two).
std::shared_ptr<grpc::Channel> MakeAgentChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    absl::Duration max_reconnect);

using ChannelFactory = std::function<std::shared_ptr<grpc::Channel>()>;

// After a failed report or heartbeat the transport drops its channel and
// makes a fresh one for the next call (a failed Deregister, the last call,
// keeps it): a channel that saw its server die keeps failing with the old
// error until its own backoff expires, while the reporter wants to be back
// the moment a restarted server listens.
class GrpcInventoryTransport : public InventoryTransport {
 public:
  // Unary calls give up after `rpc_timeout`, and so does a heartbeat whose
  // answer has not come: the stream is cancelled and the channel dropped,
  // so a paused or cut-off server cannot hold the agent.
  GrpcInventoryTransport(ChannelFactory make_channel, std::string agent_version,
                         absl::Duration rpc_timeout = absl::Seconds(5));

  absl::StatusOr<ReportAnswer> ReportNode(
      const std::string& node, const std::vector<DeviceInfo>& devices) override;
  std::unique_ptr<HeartbeatStream> OpenHeartbeat() override;
  absl::Status Deregister(const std::string& node) override;

 private:
  // The stub to use now (a fresh channel's after a failure).
  std::shared_ptr<v1::Inventory::Stub> Stub();
  // Makes the next Stub() call open a fresh channel.
  void DropChannel();

  ChannelFactory make_channel_;
  absl::Mutex mu_;
  std::shared_ptr<v1::Inventory::Stub> stub_ ABSL_GUARDED_BY(mu_);
  std::string agent_version_;
  absl::Duration rpc_timeout_;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_GRPC_TRANSPORT_H_
