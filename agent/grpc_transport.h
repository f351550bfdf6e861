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

// How long an agent beating every `heartbeat` waits for a beat's answer
// before it leaves the replica (paused, or cut off): twice the interval,
// at least 2 s (a loaded server's answer is late, not lost), at most 5 s.
// With a list of replicas, a paused one's agents are thus reporting to
// another within heartbeat + this + one reconnect backoff (at most the
// heartbeat): about 3 s at 500 ms, before the paused replica's node lease
// (5 s at least, server/replicas/node_sync.h) lets their nodes lapse.
absl::Duration HeartbeatAnswerTimeout(absl::Duration heartbeat);

// After a failed report or heartbeat the transport drops its channel and
// makes a fresh one for the next call (a failed Deregister, the last call,
// keeps it): a channel that saw its server die keeps failing with the old
// error until its own backoff expires, while the reporter wants to be back
// the moment a restarted server listens.
//
// A report that a stale replica refuses (UNAVAILABLE, STORE_UNAVAILABLE:
// it answers at once) is sent to the next replica at once, up to one try
// per replica: so when etcd returns after quorum loss, an agent reaches a
// replica back in step within one reconnect backoff (at most the
// heartbeat) of it, whatever the length of its list, and well within the
// node TTL that replica gives it (Inventory::ResetSilence).
class GrpcInventoryTransport : public InventoryTransport {
 public:
  // Unary calls give up after `rpc_timeout`, and a heartbeat whose answer
  // has not come after `answer_timeout` (zero: `rpc_timeout`;
  // HeartbeatAnswerTimeout) cancels its stream and drops the channel, so a
  // paused or cut-off server cannot hold the agent. `replicas`: how many
  // channels `make_channel` turns over (the --server list's entries).
  GrpcInventoryTransport(ChannelFactory make_channel, std::string agent_version,
                         absl::Duration rpc_timeout = absl::Seconds(5),
                         absl::Duration answer_timeout = absl::ZeroDuration(),
                         int replicas = 1);

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
  absl::Duration answer_timeout_;
  int replicas_;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_GRPC_TRANSPORT_H_
