#include "server/fleet/node_report.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "selector/device_traits.h"
#include "server/fleet/device_normalize.h"
#include "server/model/names.h"

namespace ctxsel::server {
namespace {

// RESOURCE_EXHAUSTED "<field>: <what> (--<flag>)", reason LIMIT_EXCEEDED.
absl::Status LimitExceeded(const std::string& field, const std::string& what,
                           int limit, const std::string& flag) {
  return WithErrorInfo(
      absl::ResourceExhaustedError(
          absl::StrCat(field, ": ", what, " (--", flag, ")")),
      kReasonLimitExceeded,
      {{"field", field}, {"limit", absl::StrCat(limit)}, {"flag", flag}});
}

bool UtilisationInRange(double u) {
  return std::isfinite(u) && u >= 0 && u <= 1;
}

absl::Status NormalizeDevice(const std::string& node_id,
                             const std::string& field, Device& device) {
  if (device.node.empty()) device.node = node_id;
  if (device.node != node_id) {
    return FieldViolation(
        field + ".node",
        absl::StrCat("'", device.node, "' but the report is for '", node_id,
                     "'"));
  }
  if (device.index < -1) {
    return FieldViolation(field + ".index",
                          absl::StrCat(device.index, " (must be >= -1)"));
  }
  CTXSEL_RETURN_IF_ERROR(ValidateName(device.id, field + ".id"));
  // Scoped to the node: otherwise a node could report another's ids first
  // and keep that node out of the inventory.
  if (!absl::StartsWith(device.id, absl::StrCat(node_id, "/"))) {
    return FieldViolation(
        field + ".id",
        absl::StrCat("'", device.id, "' must start with '", node_id,
                     "/' (device ids are scoped to their node)"));
  }
  if (!UtilisationInRange(device.properties.utilisation)) {
    return FieldViolation(
        field + ".utilisation",
        absl::StrCat(device.properties.utilisation, " is not in [0, 1]"));
  }
  if (device.properties.compute_units < 0) {
    return FieldViolation(field + ".compute_units",
                          absl::StrCat(device.properties.compute_units));
  }
  if (!device.condition.health_reason.empty()) {
    CTXSEL_RETURN_IF_ERROR(
        ValidateName(device.condition.health_reason, field + ".health_reason"));
  }
  // Cordons are the server's (output only in a report).
  device.condition.cordoned = false;
  device.condition.draining = false;
  device.condition.cordon_reason.clear();
  if (device.properties.claim_capacity < 1) {
    return FieldViolation(
        field + ".claim_capacity",
        absl::StrCat(device.properties.claim_capacity, " (must be >= 0)"));
  }
  return absl::OkStatus();
}

// Each trait name follows the rule for names; `limits` bounds how many.
absl::Status CheckTraits(const std::string& field,
                         const selector::DeviceTraits& traits,
                         const ReportLimits& limits) {
  size_t count = 0;
  for (const selector::DeviceTraitField& set : selector::kDeviceTraitFields) {
    const selector::NameSet& names = traits.*set.member;
    count += names.size();
    if (count > static_cast<size_t>(limits.max_traits_per_device)) {
      return LimitExceeded(
          field + ".traits",
          absl::StrCat("more than ", limits.max_traits_per_device,
                       " trait names"),
          limits.max_traits_per_device, "max_traits_per_device");
    }
    for (const std::string& name : names) {
      CTXSEL_RETURN_IF_ERROR(
          ValidateName(name, absl::StrCat(field, ".traits.", set.name)));
    }
  }
  return absl::OkStatus();
}

// A parent is another device of the report, itself a whole device: one
// level of partitions, so that a claim's conflicts are its parent and its
// children.
absl::Status CheckParents(const std::vector<Device>& devices) {
  absl::flat_hash_map<std::string, const Device*> by_id;
  for (const Device& d : devices) by_id[d.id] = &d;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string& parent = devices[i].condition.parent;
    if (parent.empty()) continue;
    const std::string field = absl::StrCat("node.devices[", i, "].parent");
    auto it = by_id.find(parent);
    if (it == by_id.end() || it->second == &devices[i]) {
      return FieldViolation(
          field,
          absl::StrCat("'", parent, "' is not another device of the node"));
    }
    if (!it->second->condition.parent.empty()) {
      return FieldViolation(
          field, absl::StrCat("'", parent, "' is itself a partition of '",
                              it->second->condition.parent, "'"));
    }
  }
  return absl::OkStatus();
}

bool SameTraits(const selector::DeviceTraits& a,
                const selector::DeviceTraits& b) {
  for (const selector::DeviceTraitField& field : selector::kDeviceTraitFields) {
    if (a.*field.member != b.*field.member) return false;
  }
  return true;
}

}  // namespace

absl::Status NormalizeReport(NodeState& node, const ReportLimits& limits) {
  CTXSEL_RETURN_IF_ERROR(ValidateName(node.id, "node.id"));
  if (node.devices.size() > static_cast<size_t>(limits.max_devices_per_node)) {
    return LimitExceeded("node.devices",
                         absl::StrCat(node.devices.size(),
                                      " devices; a node may report at most ",
                                      limits.max_devices_per_node),
                         limits.max_devices_per_node, "max_devices_per_node");
  }
  // The names rule (when given): the version is printed in `nodes ls`, and
  // a control character there would reach an admin's terminal.
  if (!node.agent_version.empty()) {
    CTXSEL_RETURN_IF_ERROR(
        ValidateName(node.agent_version, "node.agent_version"));
  }
  CTXSEL_RETURN_IF_ERROR(NormalizeDevices(node.id, node.devices));
  absl::flat_hash_set<std::string> ids;
  absl::flat_hash_set<int> indices;
  for (size_t i = 0; i < node.devices.size(); ++i) {
    const std::string field = absl::StrCat("node.devices[", i, "]");
    Device& device = node.devices[i];
    CTXSEL_RETURN_IF_ERROR(CheckTraits(field, device.traits, limits));
    CTXSEL_RETURN_IF_ERROR(NormalizeDevice(node.id, field, device));
    if (!ids.insert(device.id).second) {
      return FieldViolation(field + ".id",
                            absl::StrCat("'", device.id, "' is used twice"));
    }
    if (!indices.insert(device.index).second) {
      return FieldViolation(field + ".index",
                            absl::StrCat(device.index, " is used twice"));
    }
  }
  CTXSEL_RETURN_IF_ERROR(CheckParents(node.devices));
  std::sort(node.devices.begin(), node.devices.end(),
            [](const Device& a, const Device& b) { return a.index < b.index; });
  return absl::OkStatus();
}

absl::Status CheckBeat(absl::Span<const DeviceBeat> beat) {
  for (size_t i = 0; i < beat.size(); ++i) {
    if (!UtilisationInRange(beat[i].second)) {
      return WithFieldViolation(
          absl::InvalidArgumentError(
              absl::StrCat("utilisation[", i, "] (", beat[i].first,
                           "): ", beat[i].second, " is not in [0, 1]")),
          absl::StrCat("utilisation[", i, "].utilisation"),
          absl::StrCat(beat[i].second, " is not in [0, 1]"));
    }
  }
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
               x.properties.claim_capacity == y.properties.claim_capacity &&
               x.identity == y.identity &&
               x.condition.health == y.condition.health &&
               x.condition.health_reason == y.condition.health_reason &&
               x.condition.parent == y.condition.parent;
      });
}

}  // namespace ctxsel::server
