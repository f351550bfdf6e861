#include "server/fleet/fleet_context.h"

namespace ctxsel::server {

selector::TargetDevices NodeTargetDevices(absl::Span<const NodeSlot> slots,
                                          int32_t default_index) {
  selector::TargetDevices target_devices;
  target_devices.default_device = default_index;
  for (const auto& [index, traits] : slots) {
    target_devices.devices[index] = *traits;
  }
  return target_devices;
}

selector::Context DeviceContext(const Device& device,
                                const std::vector<Device>& node_devices) {
  std::vector<NodeSlot> slots;
  slots.reserve(node_devices.size());
  for (const Device& d : node_devices) slots.emplace_back(d.index, &d.traits);
  selector::Context context;
  context.device = device.traits;
  context.target_devices = NodeTargetDevices(slots, device.index);
  return context;
}

}  // namespace ctxsel::server
