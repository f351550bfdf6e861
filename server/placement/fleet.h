// fleet.h: the live devices, grouped by device class and node layout.
//
// The one place device state lives, utilisation included: the inventory
// keeps none of it and reads it back from here for listings
// (Placer::NodeDevices). Internal to the Placer. The Fleet applies inventory
// changes (a node's full report, its removal, a heartbeat's utilisations)
// incrementally: a node report touches only that node's devices, and the groups
// stay ordered for the policies. A class or layout lives while some device uses
// it and is freed with its last device; ids are never reused (resolution caches
// are keyed by class id, and the Placer drops a freed class's entries).
//
// One mutex guards it: writers hold it exclusively for O(devices of the
// node x log n); a Select holds it shared (through Fleet::Reader) while it
// evaluates and picks, so every pointer it sees stays valid. Listings take
// none of it: the writers publish each node's devices as an immutable
// NodeListing (node_listing.h) that Listing() finds, and a heartbeat writes
// its utilisations into its node's record in place.
//
//   Fleet fleet;
//   Fleet::ClassChanges changes;
//   CTXSEL_RETURN_IF_ERROR(fleet.ReplaceNode("n1", devices, &changes));
//   {
//     Fleet::Reader r(fleet);
//     for (const DeviceGroup* g : r.groups()) ...
//   }
#ifndef CTXSEL_SERVER_PLACEMENT_FLEET_H_
#define CTXSEL_SERVER_PLACEMENT_FLEET_H_

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "server/model/model.h"
#include "server/placement/device_class.h"
#include "server/placement/device_group.h"
#include "server/placement/node_listing.h"

namespace ctxsel::server::placement::internal {

// What a fleet change did to the set of device classes.
struct FleetClassChanges {
  std::vector<const DeviceClass*> created;  // seen for the first time
  std::vector<int> freed;                   // ids of classes now unused
};

class Fleet {
 public:
  Fleet() = default;
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  using ClassChanges = FleetClassChanges;

  // Replaces `node`'s devices (empty: removes the node), in
  // O(devices x log n). `devices` are as NormalizeReport (node_report.h)
  // accepts them: checked there, once, and not here again. The one check
  // that needs the fleet is here: AlreadyExistsError "node.devices[1].id:
  // 'x' belongs to node 'y'"; nothing changes then.
  absl::Status ReplaceNode(absl::string_view node, std::vector<Device> devices,
                           ClassChanges* changes) ABSL_LOCKS_EXCLUDED(mu_);

  // Replaces every node (devices grouped by Device::node); all or nothing,
  // AlreadyExistsError for an id on two nodes.
  absl::Status ReplaceAll(std::vector<Device> devices, ClassChanges* changes)
      ABSL_LOCKS_EXCLUDED(mu_);

  // False if `node` was not known.
  bool RemoveNode(absl::string_view node, ClassChanges* changes)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Sets the utilisation of devices of `node` (device id, value in [0, 1]
  // as CheckBeat in node_report.h accepts it) under one exclusive hold of
  // the lock, in O(updates x log n). All or nothing: NotFoundError for a
  // device that is not one of `node`'s.
  absl::Status UpdateUtilisations(
      absl::string_view node,
      absl::Span<const std::pair<std::string, double>> updates)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Moves `node`'s devices to the suspect groups (placement skips them
  // while healthy devices can serve) or back. No-op for an unknown node.
  void SetSuspect(absl::string_view node, bool suspect)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Replaces the operators' cordons (device and node cordons; a cordon of
  // a device or node not live now applies when it reports). Cordoned
  // devices move to the excluded groups, in O(cordons changed x log n).
  // Returns the live nodes whose devices an old or new cordon covers.
  std::vector<std::string> SetCordons(const std::vector<Cordon>& cordons)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The device class of a live device; NotFoundError for an unknown one.
  absl::StatusOr<DeviceClassNames> ClassOf(absl::string_view device_id) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // `node`'s devices as listings see them (node_listing.h), taking no lock
  // that a heartbeat or a Select takes; null for an unknown node.
  std::shared_ptr<const NodeListing> Listing(absl::string_view node) const;

  // The classes of the live devices, by id.
  std::vector<const DeviceClass*> Classes() const ABSL_LOCKS_EXCLUDED(mu_);
  // How many classes and layouts are live (for tests and benchmarks).
  size_t class_count() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t layout_count() const ABSL_LOCKS_EXCLUDED(mu_);

  // Shared access for a Select: the groups and nodes stay as they are while
  // a Reader lives.
  class ABSL_SCOPED_LOCKABLE Reader {
   public:
    explicit Reader(const Fleet& fleet) ABSL_SHARED_LOCK_FUNCTION(fleet.mu_);
    ~Reader() ABSL_UNLOCK_FUNCTION();
    // Non-empty groups, by class name, then layout id, healthy before
    // suspect (suspect nodes' and degraded devices), excluded (unhealthy
    // or cordoned devices) last.
    std::vector<const DeviceGroup*> groups() const;
    // Calls `visit(const DeviceGroup*)` for each of groups(), in that order,
    // with no copy of the list (a Select's path).
    template <typename Visit>
    void ForEachGroup(Visit visit) const {
      for (const auto& entry : fleet_.groups_) visit(entry.second.get());
    }
    size_t group_count() const { return fleet_.groups_.size(); }
    // Whether some live device is on a suspect node: a count kept as groups
    // come and go, not a walk over them.
    bool has_suspect() const { return fleet_.suspect_groups_ > 0; }
    // The devices of `node`; null for an unknown node.
    const std::vector<DeviceSlot*>* node(absl::string_view name) const;
    // The layout of `node`; null for an unknown node.
    const NodeLayout* layout(absl::string_view name) const;
    // The live device with this id or, failing that, this UUID; null when
    // none. (Two devices reporting one UUID: the later report's.)
    const DeviceSlot* device(absl::string_view id_or_uuid) const;

   private:
    const Fleet& fleet_;
  };

 private:
  // Class name, class id, layout id, suspect, excluded.
  using GroupKey = std::tuple<std::string, int, int, bool, bool>;
  struct NodeEntry {
    std::vector<DeviceSlot*> devices;
    const NodeLayout* layout = nullptr;
    bool suspect = false;
    // What listings read of it (published in listings_); beats write
    // their utilisations here too.
    std::shared_ptr<NodeListing> listing;
  };
  // A class or layout and how many devices (nodes) use it.
  struct ClassEntry {
    // Shared with the answers and NodeListings that name it, which may
    // outlive it here.
    std::shared_ptr<DeviceClass> device_class;
    int devices = 0;
  };
  struct LayoutEntry {
    std::shared_ptr<NodeLayout> layout;
    int nodes = 0;
  };
  // AlreadyExistsError when a device id belongs to a node other than
  // `node`.
  absl::Status CheckIdsFree(absl::string_view node,
                            const std::vector<Device>& devices) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Adds `node`, which has no devices now.
  void Apply(absl::string_view node, std::vector<Device> devices,
             ClassChanges* changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `node`'s devices; their classes and layout stay until Sweep,
  // so a re-report of the same classes keeps their ids and resolutions.
  void Erase(absl::string_view node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees the classes and layouts that no device uses any more.
  void Sweep(ClassChanges* changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const DeviceClass* InternClass(const Device& device, ClassChanges* changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const NodeLayout* InternLayout(
      std::vector<std::pair<int32_t, const DeviceClass*>> slots)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  DeviceGroup* GroupFor(const DeviceClass* c, const NodeLayout* layout,
                        bool suspect, bool excluded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets `slot`'s cordon from the cordons and (re)joins the group its
  // standing says: excluded when unhealthy or cordoned, else suspect when
  // its node is or it is degraded.
  void Place(DeviceSlot* slot, const NodeEntry& node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Publishes `node`'s devices as they are now for listings (or its
  // absence), in O(devices of the node).
  void PublishListing(absl::string_view node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `slot` out of its group, dropping the group when it empties.
  void LeaveGroup(DeviceSlot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // By class key / layout key.
  absl::flat_hash_map<std::string, ClassEntry> classes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, LayoutEntry> layouts_ ABSL_GUARDED_BY(mu_);
  int next_class_id_ ABSL_GUARDED_BY(mu_) = 0;
  int next_layout_id_ ABSL_GUARDED_BY(mu_) = 0;
  // Keys of classes and layouts whose count fell to zero since the last
  // Sweep.
  std::vector<std::string> unused_classes_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> unused_layouts_ ABSL_GUARDED_BY(mu_);
  std::map<GroupKey, std::unique_ptr<DeviceGroup>> groups_ ABSL_GUARDED_BY(mu_);
  // Groups of suspect nodes' devices that are not excluded (has_suspect()).
  int suspect_groups_ ABSL_GUARDED_BY(mu_) = 0;
  // Keyed by views of the slots' own strings (a slot's address is stable),
  // so the fleet keeps each id and UUID once.
  absl::flat_hash_map<absl::string_view, std::unique_ptr<DeviceSlot>> devices_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, NodeEntry> nodes_ ABSL_GUARDED_BY(mu_);
  // Cordons by device id and by node name.
  absl::flat_hash_map<std::string, Cordon> device_cordons_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Cordon> node_cordons_ ABSL_GUARDED_BY(mu_);
  // Live devices by UUID, for jobs that name their allocation by UUID; the
  // key views the slot's identity.uuid.
  absl::flat_hash_map<absl::string_view, DeviceSlot*> by_uuid_
      ABSL_GUARDED_BY(mu_);
  // Written under mu_, read without it (its own stripe locks).
  ListingIndex listings_;
};

}  // namespace ctxsel::server::placement::internal

#endif  // CTXSEL_SERVER_PLACEMENT_FLEET_H_
