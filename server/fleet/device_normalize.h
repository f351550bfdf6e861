// device_normalize.h: the server's pass over a report's devices with the
// shared rule of selector/sycl/device_normalize.h, so every client's report
// (agent, hand-written, another tool) ends up described the same way.
//
//   absl::Status s = NormalizeDevices(node.id, node.devices);
//   // traits completed from the SYCL catalog and checked, names lower case,
//   // vendor_index filled per vendor; or InvalidArgumentError
//   // "node.devices[2].traits.kind: 'tpu' is not a device kind ..."
#ifndef CTXSEL_SERVER_FLEET_DEVICE_NORMALIZE_H_
#define CTXSEL_SERVER_FLEET_DEVICE_NORMALIZE_H_

#include <vector>

#include "absl/status/status.h"
#include "server/model/model.h"

namespace ctxsel::server {

// Normalises each device's traits (sycl::NormalizeDeviceTraits) and gives
// every device with a vendor but no vendor_index the next free number of
// its vendor, in `index` order (sycl::VendorIndices). Errors name the field
// by the device's position in `devices`.
// Devices without an id get one by the agent's rule (sycl::DeviceIds), so a
// hand-written report and the agent name the same GPU alike: "<node>/gpu0".
absl::Status NormalizeDevices(const std::string& node,
                              std::vector<Device>& devices);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_FLEET_DEVICE_NORMALIZE_H_
