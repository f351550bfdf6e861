// inventory_service.h: the gRPC edge of ctxsel.v1.Inventory. Translates
// requests and delegates to the Inventory; device classes in listings come
// from the Placer.
//
// No call or stream holds a server thread. Heartbeat streams, one per node
// agent, run on gRPC's async API over completion queues of their own
// (heartbeat_queues.h says why); every other method is on the callback API:
// WatchInventory's streams (watch_reactor.h), and the unary calls, which
// only touch memory and answer on gRPC's callback thread (callback_call.h).
#ifndef CTXSEL_SERVER_RPC_INVENTORY_SERVICE_H_
#define CTXSEL_SERVER_RPC_INVENTORY_SERVICE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/fleet/inventory.h"
#include "server/metrics/metrics.h"
#include "server/model/page_budget.h"
#include "server/placement/placer.h"
#include "server/rpc/heartbeat_queues.h"

namespace ctxsel::server {

struct InventoryServiceOptions {
  absl::Duration heartbeat_interval = absl::Seconds(1);
  // Changes at every server start; agents may log it.
  std::string server_instance;
  // List pages carry at most this many bytes of nodes or devices
  // (PageBytes()).
  size_t page_bytes = PageBytes(4 << 20);
  // Counts heartbeats and watchers; may be null (no metrics).
  Metrics* metrics = nullptr;
  // Whether this replica is stale (RunningServer::store_stale); empty: never.
  // While it is, ReportNode and heartbeats answer StaleReplicaStatus()
  // (heartbeat_queues.h), so agents fail over to another replica.
  std::function<bool()> store_stale;
};

class InventoryService final : public InventoryServiceBase {
 public:
  // Every call is checked by `authorizer`, which must outlive the service;
  // agents report, heartbeat and deregister only their own node.
  InventoryService(const Authorizer* authorizer, Inventory* inventory,
                   const placement::Placer* placer,
                   InventoryServiceOptions options)
      : authorizer_(authorizer),
        inventory_(inventory),
        placer_(placer),
        options_(std::move(options)) {}

  // The queues that serve this service's Heartbeat streams (`queues` >= 1),
  // to add to the server's builder with it; they must not outlive it.
  std::unique_ptr<HeartbeatQueues> MakeHeartbeatQueues(int queues);

  grpc::ServerUnaryReactor* ReportNode(
      grpc::CallbackServerContext* context,
      const v1::ReportNodeRequest* request,
      v1::ReportNodeResponse* response) override;
  grpc::ServerUnaryReactor* Deregister(
      grpc::CallbackServerContext* context,
      const v1::DeregisterRequest* request,
      v1::DeregisterResponse* response) override;
  grpc::ServerUnaryReactor* ListNodes(grpc::CallbackServerContext* context,
                                      const v1::ListNodesRequest* request,
                                      v1::ListNodesResponse* response) override;
  grpc::ServerUnaryReactor* ListDevices(
      grpc::CallbackServerContext* context,
      const v1::ListDevicesRequest* request,
      v1::ListDevicesResponse* response) override;
  grpc::ServerWriteReactor<v1::InventoryEvent>* WatchInventory(
      grpc::CallbackServerContext* context,
      const v1::WatchInventoryRequest* request) override;

 private:
  grpc::Status DoReportNode(const grpc::ServerContextBase& context,
                            const v1::ReportNodeRequest& request,
                            v1::ReportNodeResponse* response);
  grpc::Status DoDeregister(const grpc::ServerContextBase& context,
                            const v1::DeregisterRequest& request);
  grpc::Status DoListNodes(const grpc::ServerContextBase& context,
                           const v1::ListNodesRequest& request,
                           v1::ListNodesResponse* response);
  grpc::Status DoListDevices(const grpc::ServerContextBase& context,
                             const v1::ListDevicesRequest& request,
                             v1::ListDevicesResponse* response);
  // A listed device: its proto with its class from the Placer.
  void ListedDeviceToProto(const Device& device, v1::Device* out) const;

  const Authorizer* const authorizer_;
  Inventory* const inventory_;
  const placement::Placer* const placer_;
  const InventoryServiceOptions options_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_INVENTORY_SERVICE_H_
