#include "server/node_report.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server/device_normalize.h"
#include "server/names.h"

namespace ctxsel::server {
namespace {

absl::Status NormalizeDevice(const std::string& node_id,
                             const std::string& field, Device& device) {
  if (device.node.empty()) device.node = node_id;
  if (device.node != node_id) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".node: '", device.node,
                     "' but the report is for '", node_id, "'"));
  }
  if (device.index < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".index: ", device.index, " (must be >= -1)"));
  }
  if (device.id.empty()) device.id = DefaultDeviceId(node_id, device.index);
  if (absl::Status s = ValidateName(device.id, field + ".id"); !s.ok()) {
    return s;
  }
  const double u = device.properties.utilisation;
  if (!std::isfinite(u) || u < 0 || u > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".utilisation: ", u, " is not in [0, 1]"));
  }
  if (device.properties.compute_units < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".compute_units: ", device.properties.compute_units));
  }
  return absl::OkStatus();
}

bool SameTraits(const selector::DeviceTraits& a,
                const selector::DeviceTraits& b) {
  return a.kind == b.kind && a.arch == b.arch && a.isa == b.isa &&
         a.vendor == b.vendor && a.extension == b.extension;
}

}  // namespace

std::string DefaultDeviceId(const std::string& node, int index) {
  return index < 0 ? absl::StrCat(node, "/host")
                   : absl::StrCat(node, "/", index);
}

absl::Status NormalizeReport(NodeState& node) {
  if (absl::Status s = ValidateName(node.id, "node.id"); !s.ok()) return s;
  if (absl::Status s = NormalizeDevices(node.devices); !s.ok()) return s;
  absl::flat_hash_set<std::string> ids;
  absl::flat_hash_set<int> indices;
  for (size_t i = 0; i < node.devices.size(); ++i) {
    const std::string field = absl::StrCat("node.devices[", i, "]");
    Device& device = node.devices[i];
    if (absl::Status s = NormalizeDevice(node.id, field, device); !s.ok()) {
      return s;
    }
    if (!ids.insert(device.id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".id: '", device.id, "' is used twice"));
    }
    if (!indices.insert(device.index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".index: ", device.index, " is used twice"));
    }
  }
  std::sort(node.devices.begin(), node.devices.end(),
            [](const Device& a, const Device& b) { return a.index < b.index; });
  return absl::OkStatus();
}

bool SameDevices(const std::vector<Device>& a, const std::vector<Device>& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const Device& x, const Device& y) {
        return x.id == y.id && x.index == y.index &&
               x.sycl_architecture == y.sycl_architecture &&
               SameTraits(x.traits, y.traits) &&
               x.properties.memory_bytes == y.properties.memory_bytes &&
               x.properties.compute_units == y.properties.compute_units &&
               x.identity == y.identity;
      });
}

}  // namespace ctxsel::server
