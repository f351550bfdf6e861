#include "agent/device_info.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "selector/sycl/device_normalize.h"

namespace ctxsel::agent {
namespace {

// Everything but utilisation.
auto Identity(const DeviceInfo& d) {
  return std::tie(d.id, d.node, d.index, d.kind, d.arch, d.isa, d.vendor,
                  d.extension, d.sycl_architecture, d.uuid, d.pci_bus_id,
                  d.vendor_index, d.name, d.backend, d.attributes,
                  d.memory_bytes, d.compute_units, d.threads, d.numa_nodes,
                  d.claim_capacity);
}

}  // namespace

std::string DeviceInfo::PrimaryKind() const {
  for (const std::string& k : kind) {
    if (k != "host" && k != "nohost" && k != "any") return k;
  }
  return "device";
}

bool SameDeviceSet(const std::vector<DeviceInfo>& a,
                   const std::vector<DeviceInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Identity(a[i]) != Identity(b[i])) return false;
  }
  return true;
}

void AssignIds(const std::string& node, std::vector<DeviceInfo>& devices) {
  std::set<std::string> used;
  for (const DeviceInfo& d : devices) {
    if (!d.id.empty()) used.insert(d.id);
  }
  std::map<std::string, int> next_per_kind;
  int next_device_num = 0;
  for (DeviceInfo& d : devices) {
    d.node = node;
    d.index = d.IsHost() ? -1 : next_device_num++;
    if (!d.id.empty()) continue;
    std::string kind = d.PrimaryKind();
    int& n = next_per_kind[kind];
    while (used.count(absl::StrCat(node, "/", kind, n))) ++n;
    d.id = absl::StrCat(node, "/", kind, n++);
    used.insert(d.id);
  }
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
}

bool DeviceInfo::IsHost() const {
  return std::find(kind.begin(), kind.end(), "host") != kind.end();
}

}  // namespace ctxsel::agent
