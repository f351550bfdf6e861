#include "server/placement/device_group.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ctxsel::server::placement {

Device DeviceSlot::ToDevice() const {
  Device d;
  d.id = id;
  d.node = node;
  d.index = index;
  d.sycl_architecture = device_class->sycl_architecture;
  d.traits = device_class->traits;
  d.properties = properties;
  d.identity = identity;
  return d;
}

void DeviceGroup::Add(const DeviceSlot* slot) {
  by_load_.insert(slot);
  std::vector<const DeviceSlot*>& on = on_node_[slot->node];
  if (on.empty()) {
    nodes_.insert(std::lower_bound(nodes_.begin(), nodes_.end(), slot->node),
                  slot->node);
  }
  on.push_back(slot);
}

void DeviceGroup::Remove(const DeviceSlot* slot) {
  if (by_load_.erase(slot) == 0) return;
  auto it = on_node_.find(slot->node);
  std::vector<const DeviceSlot*>& on = it->second;
  on.erase(std::find(on.begin(), on.end(), slot));
  if (!on.empty()) return;
  on_node_.erase(it);
  nodes_.erase(std::lower_bound(nodes_.begin(), nodes_.end(), slot->node));
}

void DeviceGroup::SetUtilisation(DeviceSlot* slot, double utilisation) {
  if (slot->properties.utilisation == utilisation) return;
  auto it = by_load_.find(slot);
  if (it == by_load_.end()) {
    slot->properties.utilisation = utilisation;
    return;
  }
  // Re-sorted in place: the set's node is reused, nothing is allocated.
  auto node = by_load_.extract(it);
  slot->properties.utilisation = utilisation;
  by_load_.insert(std::move(node));
}

const DeviceSlot* DeviceGroup::LeastLoaded(const Pickable& pickable) const {
  for (const DeviceSlot* d : by_load_) {
    if (pickable(*d)) return d;
  }
  return nullptr;
}

const DeviceSlot* DeviceGroup::BusiestNotFull(const Pickable& pickable) const {
  // Downwards from the first full device; among equal utilisations the
  // lowest id wins, so keep walking while the utilisation stays the same.
  const DeviceSlot* best = nullptr;
  auto it = by_load_.lower_bound(ByLoad::Probe{kFullUtilisation, ""});
  while (it != by_load_.begin()) {
    const DeviceSlot* d = *--it;
    if (best != nullptr &&
        d->properties.utilisation != best->properties.utilisation) {
      break;
    }
    if (pickable(*d)) best = d;
  }
  return best;
}

const DeviceSlot* DeviceGroup::LeastLoadedOn(absl::string_view node,
                                             const Pickable& pickable) const {
  auto it = on_node_.find(node);
  if (it == on_node_.end()) return nullptr;
  const DeviceSlot* best = nullptr;
  for (const DeviceSlot* d : it->second) {
    if (!pickable(*d)) continue;
    if (best == nullptr || ByLoad()(d, best)) best = d;
  }
  return best;
}

void DeviceGroup::AppendLeastLoaded(size_t n,
                                    std::vector<const DeviceSlot*>* out) const {
  for (auto it = by_load_.begin(); it != by_load_.end() && n > 0; ++it, --n) {
    out->push_back(*it);
  }
}

}  // namespace ctxsel::server::placement
