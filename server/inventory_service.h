// inventory_service.h: the gRPC edge of ctxsel.v1.Inventory. Translates
// requests and delegates to the Inventory; device classes in listings come
// from the Placer.
#ifndef CTXSEL_SERVER_INVENTORY_SERVICE_H_
#define CTXSEL_SERVER_INVENTORY_SERVICE_H_

#include <string>

#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/inventory.h"
#include "server/placement/placer.h"

namespace ctxsel::server {

struct InventoryServiceOptions {
  absl::Duration heartbeat_interval = absl::Seconds(1);
  // Changes at every server start; agents may log it.
  std::string server_instance;
  // How often a watch stream checks whether its client went away.
  absl::Duration watch_poll = absl::Milliseconds(250);
};

class InventoryService final : public v1::Inventory::Service {
 public:
  InventoryService(Inventory* inventory, const placement::Placer* placer,
                   InventoryServiceOptions options)
      : inventory_(inventory), placer_(placer), options_(std::move(options)) {}

  grpc::Status ReportNode(grpc::ServerContext* context,
                          const v1::ReportNodeRequest* request,
                          v1::ReportNodeResponse* response) override;
  grpc::Status Heartbeat(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::HeartbeatResponse, v1::HeartbeatRequest>*
          stream) override;
  grpc::Status Deregister(grpc::ServerContext* context,
                          const v1::DeregisterRequest* request,
                          v1::DeregisterResponse* response) override;
  grpc::Status ListNodes(grpc::ServerContext* context,
                         const v1::ListNodesRequest* request,
                         v1::ListNodesResponse* response) override;
  grpc::Status ListDevices(grpc::ServerContext* context,
                           const v1::ListDevicesRequest* request,
                           v1::ListDevicesResponse* response) override;
  grpc::Status WatchInventory(
      grpc::ServerContext* context, const v1::WatchInventoryRequest* request,
      grpc::ServerWriter<v1::InventoryEvent>* writer) override;

 private:
  // The answer to one beat.
  v1::HeartbeatResponse Answer(const std::string& node,
                               Inventory::BeatAnswer answer) const;

  Inventory* const inventory_;
  const placement::Placer* const placer_;
  const InventoryServiceOptions options_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_INVENTORY_SERVICE_H_
