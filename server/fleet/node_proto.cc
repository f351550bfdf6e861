#include "server/fleet/node_proto.h"

#include "base/proto_time.h"

namespace ctxsel::server {

void TraitsToProto(const selector::DeviceTraits& traits,
                   v1::DeviceTraits* out) {
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  NameSetToProto(traits.member, out->mutable_##member());
#include "selector/device_traits.def"
}

selector::DeviceTraits TraitsFromProto(const v1::DeviceTraits& traits) {
  selector::DeviceTraits out;
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  out.member = NameSetFromProto(traits.member());
#include "selector/device_traits.def"

  return out;
}

void DeviceToProto(const Device& device, v1::Device* out) {
  TraitsToProto(device.traits, out->mutable_traits());
  out->set_sycl_architecture(device.sycl_architecture);
  DeviceStateToProto(device, out);
}

void DeviceStateToProto(const DeviceState& device, v1::Device* out) {
  out->set_id(device.id);
  out->set_node(device.node);
  out->set_index(device.index);
  out->set_memory_bytes(device.properties.memory_bytes);
  out->set_compute_units(device.properties.compute_units);
  out->set_utilisation(device.properties.utilisation);
  out->set_claim_capacity(device.properties.claim_capacity);
  out->set_uuid(device.identity.uuid);
  out->set_pci_bus_id(device.identity.pci_bus_id);
  if (device.identity.vendor_index >= 0) {
    out->set_vendor_index(device.identity.vendor_index);
  }
  const DeviceCondition& c = device.condition;
  out->set_health(
      c.health == DeviceHealth::kUnhealthy  ? v1::DEVICE_HEALTH_UNHEALTHY
      : c.health == DeviceHealth::kDegraded ? v1::DEVICE_HEALTH_DEGRADED
                                            : v1::DEVICE_HEALTH_HEALTHY);
  out->set_health_reason(c.health_reason);
  out->set_parent(c.parent);
  out->set_cordoned(c.cordoned);
  out->set_draining(c.draining);
  out->set_cordon_reason(c.cordon_reason);
}

Device DeviceFromProto(const v1::Device& device) {
  Device out;
  out.id = device.id();
  out.node = device.node();
  out.index = device.index();
  out.traits = TraitsFromProto(device.traits());
  out.sycl_architecture = device.sycl_architecture();
  out.properties.memory_bytes = device.memory_bytes();
  out.properties.compute_units = device.compute_units();
  out.properties.utilisation = device.utilisation();
  // The proto's 0 (unset) is the default capacity, 1.
  out.properties.claim_capacity =
      device.claim_capacity() == 0 ? 1 : device.claim_capacity();
  out.identity.uuid = device.uuid();
  out.identity.pci_bus_id = device.pci_bus_id();
  out.identity.vendor_index =
      device.has_vendor_index() ? device.vendor_index() : -1;
  // An unknown (newer) health value counts as the worst known.
  switch (device.health()) {
    case v1::DEVICE_HEALTH_UNSPECIFIED:
    case v1::DEVICE_HEALTH_HEALTHY:
      out.condition.health = DeviceHealth::kHealthy;
      break;
    case v1::DEVICE_HEALTH_DEGRADED:
      out.condition.health = DeviceHealth::kDegraded;
      break;
    default:
      out.condition.health = DeviceHealth::kUnhealthy;
  }
  out.condition.health_reason = device.health_reason();
  out.condition.parent = device.parent();
  out.condition.cordoned = device.cordoned();
  out.condition.draining = device.draining();
  out.condition.cordon_reason = device.cordon_reason();
  return out;
}

void NodeToProto(const NodeState& node, bool with_devices, v1::Node* out) {
  out->set_id(node.id);
  out->set_agent_version(node.agent_version);
  *out->mutable_reported_time() = ToProtoTimestamp(node.reported);
  *out->mutable_last_heartbeat_time() = ToProtoTimestamp(node.last_heartbeat);
  out->set_suspect(node.suspect);
  if (!with_devices) return;
  for (const Device& device : node.devices) {
    DeviceToProto(device, out->add_devices());
  }
}

NodeState NodeFromProto(const v1::Node& node) {
  NodeState out;
  out.id = node.id();
  out.agent_version = node.agent_version();
  for (const v1::Device& device : node.devices()) {
    out.devices.push_back(DeviceFromProto(device));
  }
  return out;
}

}  // namespace ctxsel::server
