#include "server/inventory_service.h"

#include "absl/strings/str_cat.h"
#include "server/proto_convert.h"

namespace ctxsel::server {

grpc::Status InventoryService::ReportNode(grpc::ServerContext* /*context*/,
                                          const v1::ReportNodeRequest* request,
                                          v1::ReportNodeResponse* response) {
  absl::Status reported = inventory_->Report(NodeFromProto(request->node()));
  if (!reported.ok()) return ToGrpcStatus(reported);
  response->set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(options_.heartbeat_interval));
  response->set_node_ttl_ms(
      absl::ToInt64Milliseconds(inventory_->options().ttl));
  response->set_server_instance(options_.server_instance);
  return grpc::Status::OK;
}

v1::HeartbeatResponse InventoryService::Answer(
    const std::string& node, Inventory::BeatAnswer answer) const {
  v1::HeartbeatResponse response;
  response.set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(options_.heartbeat_interval));
  if (answer == Inventory::BeatAnswer::kUnknownNode) {
    response.set_action(v1::HeartbeatResponse::REREPORT);
    response.set_message(absl::StrCat("unknown node '", node, "': re-report"));
  } else if (answer == Inventory::BeatAnswer::kUnknownDevice) {
    response.set_action(v1::HeartbeatResponse::REREPORT);
    response.set_message(absl::StrCat("node '", node,
                                      "' names a device it did not report: "
                                      "re-report"));
  }
  return response;
}

grpc::Status InventoryService::Heartbeat(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<v1::HeartbeatResponse, v1::HeartbeatRequest>*
        stream) {
  v1::HeartbeatRequest beat;
  std::string node;
  while (stream->Read(&beat)) {
    if (node.empty()) node = beat.node();
    if (beat.node().empty() || beat.node() != node) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("node: '", beat.node(),
                       "' (a heartbeat stream carries one non-empty node, "
                       "first '",
                       node, "')"));
    }
    std::vector<std::pair<std::string, double>> utilisation;
    for (const v1::DeviceUtilisation& u : beat.utilisation()) {
      utilisation.emplace_back(u.device_id(), u.utilisation());
    }
    absl::StatusOr<Inventory::BeatAnswer> answer =
        inventory_->Heartbeat(node, utilisation);
    if (!answer.ok()) return ToGrpcStatus(answer.status());
    if (!stream->Write(Answer(node, *answer))) break;
  }
  return grpc::Status::OK;
}

grpc::Status InventoryService::Deregister(
    grpc::ServerContext* /*context*/, const v1::DeregisterRequest* request,
    v1::DeregisterResponse* /*response*/) {
  return ToGrpcStatus(inventory_->Deregister(request->node()));
}

grpc::Status InventoryService::ListNodes(grpc::ServerContext* /*context*/,
                                         const v1::ListNodesRequest* request,
                                         v1::ListNodesResponse* response) {
  absl::StatusOr<Page<NodeState>> page =
      inventory_->ListNodes(request->page_size(), request->page_token());
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (const NodeState& node : page->items) {
    v1::NodeSummary* summary = response->add_nodes();
    NodeToProto(node, request->include_devices(), summary->mutable_node());
    summary->set_device_count(static_cast<int32_t>(node.devices.size()));
  }
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status InventoryService::ListDevices(
    grpc::ServerContext* /*context*/, const v1::ListDevicesRequest* request,
    v1::ListDevicesResponse* response) {
  absl::StatusOr<Page<Device>> page =
      inventory_->ListDevices(request->match(), request->node(),
                              request->page_size(), request->page_token());
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (const Device& device : page->items) {
    v1::Device* out = response->add_devices();
    DeviceToProto(device, out);
    absl::StatusOr<std::string> device_class =
        placer_->DeviceClassOf(device.id);
    if (device_class.ok()) out->set_device_class(*device_class);
  }
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status InventoryService::WatchInventory(
    grpc::ServerContext* context, const v1::WatchInventoryRequest* request,
    grpc::ServerWriter<v1::InventoryEvent>* writer) {
  int64_t cursor = 0;
  std::vector<NodeState> nodes = inventory_->Nodes(&cursor);
  if (request->initial()) {
    for (const NodeState& node : nodes) {
      InventoryEvent event{InventoryEvent::Kind::kAdded, node, "initial",
                           cursor, absl::Now()};
      v1::InventoryEvent out;
      EventToProto(event, &out);
      if (!writer->Write(out)) return grpc::Status::OK;
    }
  }
  while (!context->IsCancelled()) {
    absl::StatusOr<std::vector<InventoryEvent>> events =
        inventory_->EventsAfter(cursor, options_.watch_poll);
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const InventoryEvent& event : *events) {
      v1::InventoryEvent out;
      EventToProto(event, &out);
      if (!writer->Write(out)) return grpc::Status::OK;
      cursor = event.sequence;
    }
  }
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
