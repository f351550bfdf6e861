#include "server/rpc/inventory_service.h"

#include "absl/strings/str_cat.h"
#include "base/proto_time.h"
#include "server/rpc/call_interrupt.h"
#include "server/rpc/callback_call.h"
#include "server/rpc/proto_convert.h"
#include "server/rpc/watch_reactor.h"

namespace ctxsel::server {

grpc::ServerUnaryReactor* InventoryService::ReportNode(
    grpc::CallbackServerContext* context, const v1::ReportNodeRequest* request,
    v1::ReportNodeResponse* response) {
  return Answer(context, DoReportNode(*context, *request, response));
}

grpc::Status InventoryService::DoReportNode(
    const grpc::ServerContextBase& context,
    const v1::ReportNodeRequest& request, v1::ReportNodeResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(context, "Inventory/ReportNode");
  if (!who.ok()) return ToGrpcStatus(who.status());
  if (absl::Status s = Authorizer::CheckNode(*who, request.node().id());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  if (absl::Status s =
          authorizer_->limits().Take(Budget::kReport, request.node().id());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  if (options_.store_stale && options_.store_stale()) {
    return StaleReplicaStatus();
  }
  absl::Status reported = inventory_->Report(NodeFromProto(request.node()));
  if (!reported.ok()) return ToGrpcStatus(reported);
  *response->mutable_heartbeat_interval() =
      ToProtoDuration(options_.heartbeat_interval);
  *response->mutable_node_ttl() = ToProtoDuration(inventory_->options().ttl);
  response->set_server_instance(options_.server_instance);
  return grpc::Status::OK;
}

std::unique_ptr<HeartbeatQueues> InventoryService::MakeHeartbeatQueues(
    int queues) {
  HeartbeatSettings settings;
  settings.authorizer = authorizer_;
  settings.inventory = inventory_;
  settings.interval = options_.heartbeat_interval;
  settings.metrics = options_.metrics;
  settings.stale = &options_.store_stale;
  return std::make_unique<HeartbeatQueues>(this, std::move(settings), queues);
}

grpc::ServerUnaryReactor* InventoryService::Deregister(
    grpc::CallbackServerContext* context, const v1::DeregisterRequest* request,
    v1::DeregisterResponse* /*response*/) {
  return Answer(context, DoDeregister(*context, *request));
}

grpc::Status InventoryService::DoDeregister(
    const grpc::ServerContextBase& context,
    const v1::DeregisterRequest& request) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(context, "Inventory/Deregister");
  if (!who.ok()) return ToGrpcStatus(who.status());
  if (absl::Status s = Authorizer::CheckNode(*who, request.node()); !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(inventory_->Deregister(request.node()));
}

grpc::ServerUnaryReactor* InventoryService::ListNodes(
    grpc::CallbackServerContext* context, const v1::ListNodesRequest* request,
    v1::ListNodesResponse* response) {
  return Answer(context, DoListNodes(*context, *request, response));
}

grpc::Status InventoryService::DoListNodes(
    const grpc::ServerContextBase& context, const v1::ListNodesRequest& request,
    v1::ListNodesResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(context, "Inventory/ListNodes");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  const bool with_devices = request.include_devices();
  PageBudget<NodeState> budget(
      options_.page_bytes, [with_devices](const NodeState& node) {
        v1::NodeSummary summary;
        NodeToProto(node, with_devices, summary.mutable_node());
        summary.set_device_count(static_cast<int32_t>(node.devices.size()));
        return RepeatedFieldBytes(summary);
      });
  absl::StatusOr<Page<NodeState>> page = inventory_->ListNodes(
      request.page_size(), request.page_token(), std::move(budget));
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (const NodeState& node : page->items) {
    v1::NodeSummary* summary = response->add_nodes();
    NodeToProto(node, with_devices, summary->mutable_node());
    summary->set_device_count(static_cast<int32_t>(node.devices.size()));
  }
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

void InventoryService::ListedDeviceToProto(const Device& device,
                                           v1::Device* out) const {
  DeviceToProto(device, out);
  absl::StatusOr<placement::DeviceClassNames> device_class =
      placer_->DeviceClassOf(device.id);
  if (device_class.ok()) {
    out->set_device_class(device_class->name);
    out->set_device_class_short_name(device_class->short_name);
  }
}

grpc::ServerUnaryReactor* InventoryService::ListDevices(
    grpc::CallbackServerContext* context, const v1::ListDevicesRequest* request,
    v1::ListDevicesResponse* response) {
  return Answer(context, DoListDevices(*context, *request, response));
}

grpc::Status InventoryService::DoListDevices(
    const grpc::ServerContextBase& context,
    const v1::ListDevicesRequest& request, v1::ListDevicesResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(context, "Inventory/ListDevices");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  PageBudget<Device> budget(options_.page_bytes, [this](const Device& device) {
    v1::Device out;
    ListedDeviceToProto(device, &out);
    return RepeatedFieldBytes(out);
  });
  absl::StatusOr<DeviceFilter> device_filter =
      placer_->device_filters().Get(request.device_filter(), "device_filter");
  if (!device_filter.ok()) return ToGrpcStatus(device_filter.status());
  absl::StatusOr<Page<Device>> page = inventory_->ListDevices(
      *device_filter, request.node(), request.page_size(), request.page_token(),
      std::move(budget), [&context] { return CallInterrupted(context); });
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (const Device& device : page->items) {
    ListedDeviceToProto(device, response->add_devices());
  }
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::InventoryEvent>* InventoryService::WatchInventory(
    grpc::CallbackServerContext* context,
    const v1::WatchInventoryRequest* request) {
  auto link = std::make_shared<ReactorLink<WatchReactor>>();
  absl::StatusOr<Authorizer::StreamGrant> grant = authorizer_->AuthorizeStream(
      *context, "Inventory/WatchInventory", RevokeThrough(link));
  if (!grant.ok()) {
    return new Refused<grpc::ServerWriteReactor<v1::InventoryEvent>>(
        ToGrpcStatus(grant.status()));
  }
  absl::StatusOr<WatchStart> start =
      inventory_->StartWatch({.initial = request->initial(),
                              .resume_after = request->resume_after(),
                              .resume_epoch = request->resume_epoch(),
                              .resync = request->resync()});
  if (!start.ok()) {
    return new Refused<grpc::ServerWriteReactor<v1::InventoryEvent>>(
        ToGrpcStatus(start.status()));
  }
  return new WatchReactor(std::move(link), inventory_, *std::move(start),
                          *std::move(grant), options_.metrics);
}

}  // namespace ctxsel::server
