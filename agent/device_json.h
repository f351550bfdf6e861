// DeviceInfo <-> JSON, in the schema of the API's device message.
//
// Used by `--devices_file` (declare extra or simulated devices, so a whole
// fleet can be simulated on one machine) and by `ctxsel-agent --print --json`.
// Field names are the proto field names of ctxsel.v1.Device:
//
//   {"devices": [
//     {"sycl_architecture": "nvidia_gpu_sm_90", "name": "H100",
//      "memory_bytes": 85899345920, "compute_units": 132,
//      "utilisation": 0.25},
//     {"kind": ["gpu", "nohost"], "arch": ["my_accel"], "vendor": ["acme"]}
//   ]}
//
// A device needs `sycl_architecture` (its kind/arch/isa/vendor traits are then
// derived from it, and may be extended by the lists given) or `kind`.
// Unknown keys are errors, so a typo does not silently drop a property.
#ifndef CTXSEL_AGENT_DEVICE_JSON_H_
#define CTXSEL_AGENT_DEVICE_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/device_info.h"
#include "nlohmann/json.hpp"

namespace ctxsel::agent {

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

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_DEVICE_JSON_H_
