#include "server/placement/pick.h"

#include <algorithm>
#include <vector>

namespace ctxsel::server::placement {
namespace {

const DeviceSlot* LeastLoaded(absl::Span<const DeviceGroup* const> groups,
                              const Pickable& pickable) {
  const DeviceSlot* best = nullptr;
  for (const DeviceGroup* g : groups) {
    const DeviceSlot* d = g->LeastLoaded(pickable);
    if (d != nullptr && (best == nullptr || LessLoaded(d, best))) best = d;
  }
  return best;
}

const DeviceSlot* Pack(absl::Span<const DeviceGroup* const> groups,
                       const Pickable& pickable) {
  const DeviceSlot* best = nullptr;
  for (const DeviceGroup* g : groups) {
    const DeviceSlot* d = g->BusiestNotFull(pickable);
    if (d == nullptr) continue;
    if (best == nullptr ||
        d->properties.utilisation > best->properties.utilisation ||
        (d->properties.utilisation == best->properties.utilisation &&
         d->id < best->id)) {
      best = d;
    }
  }
  return best != nullptr ? best : LeastLoaded(groups, pickable);
}

// The groups' nodes in order: group by group, each group's by name.
const DeviceSlot* LeastLoadedOnNode(absl::Span<const DeviceGroup* const> groups,
                                    uint64_t i, const Pickable& pickable) {
  for (const DeviceGroup* g : groups) {
    if (i < g->node_count()) return g->LeastLoadedOn(g->node(i), pickable);
    i -= g->node_count();
  }
  return nullptr;  // unreachable for i < the total
}

const DeviceSlot* Spread(absl::Span<const DeviceGroup* const> groups,
                         uint64_t ticket, const Pickable& pickable) {
  uint64_t total = 0;
  for (const DeviceGroup* g : groups) total += g->node_count();
  for (uint64_t step = 0; step < total; ++step) {
    const DeviceSlot* d =
        LeastLoadedOnNode(groups, (ticket + step) % total, pickable);
    if (d != nullptr) return d;
  }
  return nullptr;
}

}  // namespace

bool LessLoaded(const DeviceSlot* a, const DeviceSlot* b) {
  if (a->properties.utilisation != b->properties.utilisation) {
    return a->properties.utilisation < b->properties.utilisation;
  }
  return a->id < b->id;
}

const DeviceSlot* PickDevice(Policy policy,
                             absl::Span<const DeviceGroup* const> groups,
                             uint64_t ticket, const Pickable& pickable) {
  switch (policy) {
    case Policy::kPack:
      return Pack(groups, pickable);
    case Policy::kSpread:
      return Spread(groups, ticket, pickable);
    case Policy::kLeastLoaded:
      break;
  }
  return LeastLoaded(groups, pickable);
}

std::vector<const DeviceSlot*> LeastLoadedDevices(
    absl::Span<const DeviceGroup* const> groups, size_t n,
    const DeviceSlot* skip) {
  std::vector<const DeviceSlot*> all;
  all.reserve(groups.size() * (n + 1));  // one allocation, not one per growth
  for (const DeviceGroup* g : groups) g->AppendLeastLoaded(n + 1, &all);
  all.erase(std::remove(all.begin(), all.end(), skip), all.end());
  // A lambda, which the sort inlines (a function pointer it calls).
  std::sort(all.begin(), all.end(),
            [](const DeviceSlot* a, const DeviceSlot* b) {
              return LessLoaded(a, b);
            });
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace ctxsel::server::placement
