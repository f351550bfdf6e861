#include "devices/device_proto.h"

#include <cstdint>
#include <string>

namespace ctxsel {

v1::Device DeviceToProto(const DeviceInfo& d) {
  v1::Device device;
  device.set_id(d.id);
  device.set_node(d.node);
  device.set_index(d.index);
  v1::DeviceTraits* traits = device.mutable_traits();
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  for (const std::string& v : d.member) traits->add_##member(v);
#include "selector/device_traits.def"

  device.set_sycl_architecture(d.sycl_architecture);
  device.set_memory_bytes(static_cast<uint64_t>(d.memory_bytes));
  device.set_compute_units(d.compute_units);
  device.set_utilisation(d.utilisation);
  device.set_claim_capacity(d.claim_capacity);
  device.set_uuid(d.uuid);
  device.set_pci_bus_id(d.pci_bus_id);
  if (d.vendor_index >= 0) device.set_vendor_index(d.vendor_index);
  switch (d.health) {
    case DeviceHealth::kHealthy:
      device.set_health(v1::DEVICE_HEALTH_HEALTHY);
      break;
    case DeviceHealth::kDegraded:
      device.set_health(v1::DEVICE_HEALTH_DEGRADED);
      break;
    case DeviceHealth::kUnhealthy:
      device.set_health(v1::DEVICE_HEALTH_UNHEALTHY);
      break;
  }
  device.set_health_reason(d.health_reason);
  device.set_parent(d.parent);
  return device;
}

}  // namespace ctxsel
