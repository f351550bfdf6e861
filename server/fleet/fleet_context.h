// How a fleet maps onto the OpenMP context (docs/service.md): a candidate
// device's traits are the `device` trait set, and the devices of its node
// are the `target_device` trait sets, with device_num = the index on the
// node (-1 the host CPU) and the default device = the candidate itself.
// Inventory listings and placement both build their contexts here.
//
//   selector::Context ctx = DeviceContext(device, node_devices);
#ifndef CTXSEL_SERVER_FLEET_FLEET_CONTEXT_H_
#define CTXSEL_SERVER_FLEET_FLEET_CONTEXT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "selector/selector.h"
#include "server/model/model.h"

namespace ctxsel::server {

// One device of a node: its index and its traits (not owned).
using NodeSlot = std::pair<int32_t, const selector::DeviceTraits*>;

// The target-device trait sets of a node with `slots`, whose default device
// is the one at `default_index`.
selector::TargetDevices NodeTargetDevices(absl::Span<const NodeSlot> slots,
                                          int32_t default_index);

// The context in which a variant would run on `device` of a node with
// `node_devices`: no construct or implementation traits, no variables.
selector::Context DeviceContext(const Device& device,
                                const std::vector<Device>& node_devices);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_FLEET_FLEET_CONTEXT_H_
