// device_proto.h: a DeviceInfo in the API's form (ctxsel.v1.Device), as the
// agent reports it and as `ctxsel-cli coverage --with_devices` sends the
// devices of a hypothetical node.
//
//   *node.add_devices() = DeviceToProto(device);
#ifndef CTXSEL_DEVICES_DEVICE_PROTO_H_
#define CTXSEL_DEVICES_DEVICE_PROTO_H_

#include "devices/device_info.h"
#include "proto/ctxsel/v1/ctxsel.pb.h"

namespace ctxsel {

// Every field of `device` the API carries; `vendor_index` only when known
// (>= 0), so the server numbers the others.
v1::Device DeviceToProto(const DeviceInfo& device);

}  // namespace ctxsel

#endif  // CTXSEL_DEVICES_DEVICE_PROTO_H_
