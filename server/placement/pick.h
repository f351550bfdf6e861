// pick.h: the placement policies over device groups.
//
// Given the groups of the winning device classes, each policy picks one
// device in O(groups x log n) (spread: O(groups) plus the devices of one
// node) — never a scan of the fleet. Ties are broken by device id, so the
// same fleet state and request give the same answer (spread also depends
// on its ticket, the count of spread requests served).
//
//   const DeviceSlot* d = PickDevice(Policy::kLeastLoaded, groups, 0);
//   const DeviceSlot* free = PickDevice(policy, groups, 0, Pickable{&claims});
#ifndef CTXSEL_SERVER_PLACEMENT_PICK_H_
#define CTXSEL_SERVER_PLACEMENT_PICK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "server/model/model.h"
#include "server/placement/device_group.h"

namespace ctxsel::server::placement {

// True when `a` is less loaded than `b`: lower utilisation, then lower id.
bool LessLoaded(const DeviceSlot* a, const DeviceSlot* b);

// The device `policy` picks among the `pickable` devices of `groups`; null
// when there is none.
//   least_loaded: the lowest utilisation.
//   pack:         the highest utilisation below kFullUtilisation; when all
//                 are full, the least loaded.
//   spread:       the node at position `ticket` (mod their number) in the
//                 groups' nodes by name, then its least loaded device; the
//                 next node when it has no pickable device.
const DeviceSlot* PickDevice(Policy policy,
                             absl::Span<const DeviceGroup* const> groups,
                             uint64_t ticket, const Pickable& pickable = {});

// Up to `n` devices of `groups`, least loaded first, without `skip`.
std::vector<const DeviceSlot*> LeastLoadedDevices(
    absl::Span<const DeviceGroup* const> groups, size_t n,
    const DeviceSlot* skip);

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_PICK_H_
