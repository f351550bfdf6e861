#include "server/placement/device_group.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ctxsel::server::placement {

Device DeviceSlot::ToDevice() const {
  Device d;
  static_cast<DeviceState&>(d) = *this;
  d.sycl_architecture = device_class->sycl_architecture;
  d.traits = device_class->traits;
  return d;
}

DeviceGroup::LoadKey DeviceGroup::KeyOf(const DeviceSlot* slot) {
  LoadKey key;
  key.utilisation = slot->properties.utilisation;
  key.slot = slot;
  const std::string& id = slot->id;
  for (size_t i = 0; i < 16 && i < id.size(); ++i) {
    key.id_head[i / 8] |= uint64_t{static_cast<unsigned char>(id[i])}
                          << (8 * (7 - i % 8));
  }
  return key;
}

bool DeviceGroup::ByLoad::operator()(const LoadKey& a, const LoadKey& b) const {
  if (a.utilisation != b.utilisation) return a.utilisation < b.utilisation;
  if (a.id_head[0] != b.id_head[0]) return a.id_head[0] < b.id_head[0];
  if (a.id_head[1] != b.id_head[1]) return a.id_head[1] < b.id_head[1];
  // Names have no NUL bytes, so equal heads mean equal first 16 bytes.
  const absl::string_view x =
      a.slot == nullptr ? absl::string_view() : absl::string_view(a.slot->id);
  const absl::string_view y =
      b.slot == nullptr ? absl::string_view() : absl::string_view(b.slot->id);
  return x < y;
}

void DeviceGroup::Add(const DeviceSlot* slot) {
  if (!by_load_.insert(KeyOf(slot)).second) return;
  if (slot->condition.cordoned) ++cordoned_;
  std::vector<const DeviceSlot*>& on = on_node_[slot->node];
  if (on.empty()) {
    nodes_.insert(std::lower_bound(nodes_.begin(), nodes_.end(), slot->node),
                  slot->node);
  }
  on.push_back(slot);
}

void DeviceGroup::Remove(const DeviceSlot* slot) {
  if (by_load_.erase(KeyOf(slot)) == 0) return;
  if (slot->condition.cordoned) --cordoned_;
  auto it = on_node_.find(slot->node);
  std::vector<const DeviceSlot*>& on = it->second;
  on.erase(std::find(on.begin(), on.end(), slot));
  if (!on.empty()) return;
  on_node_.erase(it);
  nodes_.erase(std::lower_bound(nodes_.begin(), nodes_.end(), slot->node));
}

void DeviceGroup::SetUtilisation(DeviceSlot* slot, double utilisation) {
  if (slot->properties.utilisation == utilisation) return;
  LoadKey key = KeyOf(slot);
  slot->properties.utilisation = utilisation;
  if (by_load_.erase(key) == 0) return;
  key.utilisation = utilisation;
  by_load_.insert(key);
}

const DeviceSlot* DeviceGroup::LeastLoaded(const Pickable& pickable) const {
  for (const LoadKey& key : by_load_) {
    if (pickable(*key.slot)) return key.slot;
  }
  return nullptr;
}

const DeviceSlot* DeviceGroup::BusiestNotFull(const Pickable& pickable) const {
  // Downwards from the first full device; among equal utilisations the
  // lowest id wins, so keep walking while the utilisation stays the same.
  const DeviceSlot* best = nullptr;
  LoadKey full;
  full.utilisation = kFullUtilisation;
  auto it = by_load_.lower_bound(full);
  while (it != by_load_.begin()) {
    const DeviceSlot* d = (--it)->slot;
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
    if (best == nullptr || Before(d, best)) best = d;
  }
  return best;
}

void DeviceGroup::AppendLeastLoaded(size_t n,
                                    std::vector<const DeviceSlot*>* out) const {
  for (auto it = by_load_.begin(); it != by_load_.end() && n > 0; ++it, --n) {
    out->push_back(it->slot);
  }
}

void DeviceGroup::CountExcluded(int* cordoned, int* unhealthy) const {
  *cordoned += static_cast<int>(cordoned_);
  *unhealthy += static_cast<int>(by_load_.size() - cordoned_);
}

}  // namespace ctxsel::server::placement
