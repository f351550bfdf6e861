// device_group.h: the live devices of one device class on nodes of one
// layout, ordered so that every policy picks in O(log n).
//
// A DeviceGroup is where placement's per-device state lives: devices by
// utilisation (least_loaded, pack, alternatives) and the group's nodes by
// name (spread's round-robin). It is not synchronised: the Fleet that owns
// it guards it with its mutex (see fleet.h), and a Select builds private
// groups for jobs restricted to named nodes.
//
//   DeviceGroup group(&gpu_class, &layout);
//   group.Add(&slot);
//   group.SetUtilisation(&slot, 0.5);
//   const DeviceSlot* d = group.LeastLoaded();
#ifndef CTXSEL_SERVER_PLACEMENT_DEVICE_GROUP_H_
#define CTXSEL_SERVER_PLACEMENT_DEVICE_GROUP_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "server/model/model.h"
#include "server/placement/device_class.h"
#include "server/placement/placement.h"

namespace ctxsel::server::placement {

class DeviceGroup;

// One live device as placement keeps it: its own state (condition: health
// and parent as reported, the cordon fields as the fleet's cordons say);
// its traits are its class's.
struct DeviceSlot : DeviceState {
  size_t position = 0;  // in its node's list (and NodeListing)
  const DeviceClass* device_class = nullptr;
  DeviceGroup* group = nullptr;  // the fleet's group holding it
  // Partitions: the whole device this one is part of (condition.parent),
  // and the partitions of this one; all on the same node.
  const DeviceSlot* parent = nullptr;
  std::vector<const DeviceSlot*> children;

  // The device as the inventory reported it.
  Device ToDevice() const;
};

// A device at or above this utilisation is full (pack skips it).
inline constexpr double kFullUtilisation = 1.0;

// Which devices a pick may return: every device, or (with `claims`) those
// that can take one more claim and whose parent and children hold none (a
// partition and its whole device exclude each other). The picks below skip
// the others, so their cost grows by the number of devices skipped.
struct Pickable {
  const ClaimCheck* claims = nullptr;
  bool operator()(const DeviceSlot& d) const {
    if (claims == nullptr) return true;
    if (!claims->HasRoom(d.id, d.properties)) return false;
    // A parent and its partitions exclude each other: each must be free.
    static const DeviceProperties kWhole;
    if (d.parent != nullptr && !claims->HasRoom(d.parent->id, kWhole)) {
      return false;
    }
    for (const DeviceSlot* child : d.children) {
      if (!claims->HasRoom(child->id, kWhole)) return false;
    }
    return true;
  }
};

class DeviceGroup {
 public:
  // `suspect`: the group holds devices placement falls back on (of suspect
  // nodes, or degraded; see fleet.h). `excluded`: devices placement never
  // picks (unhealthy or cordoned), kept for counts and Explain.
  DeviceGroup(const DeviceClass* device_class, const NodeLayout* layout,
              bool suspect = false, bool excluded = false)
      : class_(device_class),
        layout_(layout),
        suspect_(suspect),
        excluded_(excluded) {}
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;

  const DeviceClass& device_class() const { return *class_; }
  const NodeLayout& layout() const { return *layout_; }
  bool suspect() const { return suspect_; }
  bool excluded() const { return excluded_; }

  // Adds or removes a device; `slot` must outlive its membership and its
  // utilisation may change only through SetUtilisation, its
  // condition.cordoned not at all, while a member.
  void Add(const DeviceSlot* slot);
  void Remove(const DeviceSlot* slot);
  void SetUtilisation(DeviceSlot* slot, double utilisation);

  size_t size() const { return by_load_.size(); }
  size_t node_count() const { return nodes_.size(); }
  // The i-th node by name, i < node_count().
  const std::string& node(size_t i) const { return nodes_[i]; }

  // Each pick considers only `pickable` devices.
  // least_loaded: the lowest utilisation, ties by device id. Null if none.
  const DeviceSlot* LeastLoaded(const Pickable& pickable = {}) const;
  // pack: the highest utilisation below kFullUtilisation, ties by device
  // id. Null if every device is full.
  const DeviceSlot* BusiestNotFull(const Pickable& pickable = {}) const;
  // The least loaded device of this group on `node`; null if none.
  const DeviceSlot* LeastLoadedOn(absl::string_view node,
                                  const Pickable& pickable = {}) const;
  // Adds this group's cordoned devices to *cordoned and its other ones to
  // *unhealthy (an excluded group's counts, for Explain), in O(1).
  void CountExcluded(int* cordoned, int* unhealthy) const;
  // Appends up to `n` devices, least loaded first.
  void AppendLeastLoaded(size_t n, std::vector<const DeviceSlot*>* out) const;

 private:
  // A device's place in by_load_: (utilisation, id), with the id's first
  // 16 bytes copied in, so that most comparisons read no slot (a heartbeat
  // re-sorts each device it names; with this key, the whole re-sort was
  // 14% of the server's CPU at 10,000 nodes beating every 500 ms, in perf).
  struct LoadKey {
    double utilisation = 0;
    uint64_t id_head[2] = {0, 0};      // big-endian, zero-padded
    const DeviceSlot* slot = nullptr;  // null: before every id
  };
  static LoadKey KeyOf(const DeviceSlot* slot);
  struct ByLoad {
    bool operator()(const LoadKey& a, const LoadKey& b) const;
  };
  // Whether `a` comes before `b` in by_load_ order.
  static bool Before(const DeviceSlot* a, const DeviceSlot* b) {
    return ByLoad()(KeyOf(a), KeyOf(b));
  }

  const DeviceClass* class_;
  const NodeLayout* layout_;
  const bool suspect_;
  const bool excluded_;
  // A B-tree: keys by value, many to a node, so a re-sort touches a few
  // cache lines where a red-black tree touched one per level.
  absl::btree_set<LoadKey, ByLoad> by_load_;
  std::vector<std::string> nodes_;  // sorted, unique
  size_t cordoned_ = 0;             // members with condition.cordoned
  absl::flat_hash_map<std::string, std::vector<const DeviceSlot*>> on_node_;
};

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_DEVICE_GROUP_H_
