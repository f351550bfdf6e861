// DeviceInfo <-> JSON, in the schema of the API's device message.
//
// Used by `--devices_file` (declare extra or simulated devices, so a whole
// fleet can be simulated on one machine) and by `ctxsel-agent --print --json`.
// Keys are the field names of ctxsel.v1.Device (snake_case; the lowerCamelCase
// names of proto3 JSON are accepted too, and 64-bit integers may be strings as
// protobuf's JSON printer writes them). Agent-local details that the API does
// not carry (product name, backend, topology, PCI location) live under
// "agent":
//
//   {"devices": [
//     {"sycl_architecture": "nvidia_gpu_sm_90", "memory_bytes": 85899345920,
//      "compute_units": 132, "utilisation": 0.25, "claim_capacity": 2,
//      "agent": {"name": "NVIDIA H100", "attributes": {"uuid": "GPU-1"}}},
//     {"traits": {"kind": ["gpu", "nohost"], "arch": ["my_accel"],
//                 "vendor": ["acme"]}}
//   ]}
//
// A device needs `sycl_architecture` (its traits then come from the SYCL
// catalog, extended by any `traits` given) or `traits.kind`; the rule is the
// server's (sycl::NormalizeDeviceTraits). `uuid`, `pci_bus_id` and
// `vendor_index` are the API's identity fields. Unknown keys are
// errors, so a typo does not silently drop a property. `id`, `node` and
// `index` may be given but the agent assigns node and index itself; the
// output-only `device_class` is accepted and ignored. `health` is
// "healthy", "degraded" or "unhealthy" (or the API enum's name), with
// `health_reason`; an agent reads the file every heartbeat, so editing it
// changes a device's health live. `parent` names the id or UUID of the
// device (in the same file) this one is a partition of.
#ifndef CTXSEL_DEVICES_DEVICE_JSON_H_
#define CTXSEL_DEVICES_DEVICE_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/device_info.h"
#include "nlohmann/json.hpp"

namespace ctxsel {

// One device as a JSON object (the inverse of DeviceFromJson).
nlohmann::json DeviceToJson(const DeviceInfo& device);

// Parses one device object; `where` prefixes error messages, e.g.
// "devices[2]" -> "devices[2].memory_bytes: expected a non-negative integer".
absl::StatusOr<DeviceInfo> DeviceFromJson(const nlohmann::json& object,
                                          const std::string& where);

// Parses a devices file: an object {"devices": [...]} or a bare array.
absl::StatusOr<std::vector<DeviceInfo>> ParseDevices(const std::string& text);

// `devices` as {"devices": [...]}, pretty-printed.
std::string DevicesToJsonText(const std::vector<DeviceInfo>& devices);

}  // namespace ctxsel

#endif  // CTXSEL_DEVICES_DEVICE_JSON_H_
