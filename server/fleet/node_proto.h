// node_proto.h: a node and its devices <-> their ctxsel.v1 messages. The one
// codec of the node model, shared by the RPC edge (server/rpc) and the
// replicas, which store nodes in etcd as v1.Node (server/replicas).
//
//   v1::Node proto;
//   NodeToProto(node, /*with_devices=*/true, &proto);
//   NodeState back = NodeFromProto(proto);  // same id, version and devices
#ifndef CTXSEL_SERVER_FLEET_NODE_PROTO_H_
#define CTXSEL_SERVER_FLEET_NODE_PROTO_H_

#include <algorithm>
#include <string>
#include <vector>

#include "ctxsel/v1/ctxsel.pb.h"
#include "selector/selector.h"
#include "server/fleet/node_report.h"
#include "server/model/model.h"

namespace ctxsel::server {

// A repeated string field as a set of names.
template <typename Repeated>
selector::NameSet NameSetFromProto(const Repeated& names) {
  return selector::NameSet(names.begin(), names.end());
}

// Names written sorted, so that listings and tests are stable.
template <typename Repeated>
void NameSetToProto(const selector::NameSet& names, Repeated* out) {
  std::vector<std::string> sorted(names.begin(), names.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::string& name : sorted) out->Add(std::move(name));
}

void TraitsToProto(const selector::DeviceTraits& traits, v1::DeviceTraits* out);
selector::DeviceTraits TraitsFromProto(const v1::DeviceTraits& traits);

void DeviceToProto(const Device& device, v1::Device* out);
// Only the device's own fields: everything but traits and
// sycl_architecture, which an answer copies from its class's prebuilt
// v1::Device (DeviceClass::proto, server/placement/device_class.h).
void DeviceStateToProto(const DeviceState& device, v1::Device* out);
Device DeviceFromProto(const v1::Device& device);

// Devices are included only when `with_devices`.
void NodeToProto(const NodeState& node, bool with_devices, v1::Node* out);
NodeState NodeFromProto(const v1::Node& node);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_FLEET_NODE_PROTO_H_
