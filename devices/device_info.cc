#include "devices/device_info.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "selector/sycl/device_normalize.h"

namespace ctxsel {
namespace {

// Everything but utilisation.
auto Identity(const DeviceInfo& d) {
  return std::tie(d.id, d.node, d.index, d.kind, d.arch, d.isa, d.vendor,
                  d.extension, d.sycl_architecture, d.uuid, d.pci_bus_id,
                  d.vendor_index, d.name, d.backend, d.attributes,
                  d.memory_bytes, d.compute_units, d.threads, d.numa_nodes,
                  d.claim_capacity, d.health, d.health_reason, d.parent);
}

}  // namespace

const char* DeviceHealthName(DeviceHealth health) {
  switch (health) {
    case DeviceHealth::kDegraded:
      return "degraded";
    case DeviceHealth::kUnhealthy:
      return "unhealthy";
    case DeviceHealth::kHealthy:
      break;
  }
  return "healthy";
}

DeviceHealth Worse(DeviceHealth a, DeviceHealth b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

std::string DeviceInfo::PrimaryKind() const { return sycl::IdKind(kind); }

bool SameDeviceSet(const std::vector<DeviceInfo>& a,
                   const std::vector<DeviceInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Identity(a[i]) != Identity(b[i])) return false;
  }
  return true;
}

void AssignIds(const std::string& node, std::vector<DeviceInfo>& devices) {
  int next_device_num = 0;
  std::vector<std::pair<std::string, std::string>> named;
  for (DeviceInfo& d : devices) {
    d.node = node;
    d.index = d.IsHost() ? -1 : next_device_num++;
    named.emplace_back(d.PrimaryKind(), d.id);
  }
  // Discovery order is index order: the host CPU (-1) comes first.
  const std::vector<std::string> ids = sycl::DeviceIds(node, named);
  for (size_t i = 0; i < devices.size(); ++i) devices[i].id = ids[i];
  std::vector<std::pair<std::string, int>> slots;
  for (const DeviceInfo& d : devices) {
    std::string vendor;
    if (!d.IsHost() && !d.vendor.empty()) {
      vendor = *std::min_element(d.vendor.begin(), d.vendor.end());
    }
    slots.emplace_back(vendor, d.vendor_index);
  }
  const std::vector<int> numbers = sycl::VendorIndices(slots);
  for (size_t i = 0; i < devices.size(); ++i) {
    devices[i].vendor_index = numbers[i];
  }
  for (DeviceInfo& d : devices) {
    if (d.parent.empty()) continue;
    for (const DeviceInfo& p : devices) {
      if (&p != &d && !p.uuid.empty() && p.uuid == d.parent) d.parent = p.id;
    }
  }
}

bool DeviceInfo::IsHost() const {
  return std::find(kind.begin(), kind.end(), "host") != kind.end();
}

}  // namespace ctxsel
