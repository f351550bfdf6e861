#include "agent/device_info.h"

#include <set>
#include <tuple>

namespace ctxsel::agent {
namespace {

// Everything but utilisation.
auto Identity(const DeviceInfo& d) {
  return std::tie(d.id, d.node, d.index, d.kinds, d.archs, d.isas, d.vendor,
                  d.extensions, d.sycl_arch, d.name, d.backend, d.attributes,
                  d.memory_bytes, d.compute_units, d.threads, d.numa_nodes);
}

}  // namespace

std::string DeviceInfo::PrimaryKind() const {
  for (const std::string& kind : kinds) {
    if (kind != "host" && kind != "nohost" && kind != "any") return kind;
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
  std::map<std::string, int> next_index;
  for (DeviceInfo& d : devices) {
    d.node = node;
    if (!d.id.empty()) continue;
    std::string kind = d.PrimaryKind();
    int& index = next_index[kind];
    auto make_id = [&] { return node + "/" + kind + std::to_string(index); };
    while (used.count(make_id())) ++index;
    d.index = index++;
    d.id = node + "/" + kind + std::to_string(d.index);
    used.insert(d.id);
  }
}

}  // namespace ctxsel::agent
