// fleet.h: the live devices, grouped by device class and node layout.
//
// Internal to the Placer. The Fleet applies inventory changes (a node's
// full report, its removal, a heartbeat's utilisations) incrementally: a
// node report touches only that node's devices, and the groups stay ordered
// for the policies. Classes and layouts, once seen, keep their ids for the
// Fleet's lifetime (resolution caches are keyed by class id).
//
// One mutex guards it: writers hold it exclusively for O(devices of the
// node x log n); a Select holds it shared (through Fleet::Reader) while it
// evaluates and picks, so every pointer it sees stays valid.
//
//   Fleet fleet;
//   std::vector<const DeviceClass*> created;
//   CTXSEL_RETURN_IF_ERROR(fleet.ReplaceNode("n1", devices, &created));
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
#include "server/model.h"
#include "server/placement/device_class.h"
#include "server/placement/device_group.h"

namespace ctxsel::server::placement::internal {

class Fleet {
 public:
  Fleet() = default;
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Replaces `node`'s devices (empty: removes the node). Appends the classes
  // seen for the first time to `created`. InvalidArgumentError naming the
  // device and field for a bad report; nothing changes then.
  absl::Status ReplaceNode(absl::string_view node, std::vector<Device> devices,
                           std::vector<const DeviceClass*>* created)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Replaces every node; all or nothing.
  absl::Status ReplaceAll(std::vector<Device> devices,
                          std::vector<const DeviceClass*>* created)
      ABSL_LOCKS_EXCLUDED(mu_);

  // False if `node` was not known.
  bool RemoveNode(absl::string_view node) ABSL_LOCKS_EXCLUDED(mu_);

  // Sets the utilisation of devices of `node` (device id, value; clamped
  // to 0..1) under one exclusive hold of the lock. All or nothing:
  // InvalidArgumentError for NaN, NotFoundError for a device that is not
  // one of `node`'s.
  absl::Status UpdateUtilisations(
      absl::string_view node,
      absl::Span<const std::pair<std::string, double>> updates)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The device class of a live device; NotFoundError for an unknown one.
  absl::StatusOr<std::string> ClassOf(absl::string_view device_id) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Every class ever seen (live or not), by id.
  std::vector<const DeviceClass*> Classes() const ABSL_LOCKS_EXCLUDED(mu_);

  // Shared access for a Select: the groups and nodes stay as they are while
  // a Reader lives.
  class ABSL_SCOPED_LOCKABLE Reader {
   public:
    explicit Reader(const Fleet& fleet) ABSL_SHARED_LOCK_FUNCTION(fleet.mu_);
    ~Reader() ABSL_UNLOCK_FUNCTION();
    // Non-empty groups, by class name, then layout id.
    std::vector<const DeviceGroup*> groups() const;
    // The devices of `node`; null for an unknown node.
    const std::vector<DeviceSlot*>* node(absl::string_view name) const;

   private:
    const Fleet& fleet_;
  };

 private:
  using GroupKey = std::tuple<std::string, int, int>;  // class name, ids
  struct NodeEntry {
    std::vector<DeviceSlot*> devices;
  };
  struct Staged;  // a validated report, ready to apply

  absl::StatusOr<Staged> Stage(absl::string_view node,
                               std::vector<Device> devices) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CheckIdsFree(const Staged& staged,
                            absl::string_view replacing) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void Apply(Staged staged, std::vector<const DeviceClass*>* created)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Erase(absl::string_view node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const DeviceClass* InternClass(const Device& device,
                                 std::vector<const DeviceClass*>* created)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const NodeLayout* InternLayout(
      std::vector<std::pair<int32_t, const DeviceClass*>> slots)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  DeviceGroup* GroupFor(const DeviceClass* c, const NodeLayout* layout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<DeviceClass>> classes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, const DeviceClass*> class_by_key_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<NodeLayout>> layouts_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, const NodeLayout*> layout_by_key_
      ABSL_GUARDED_BY(mu_);
  std::map<GroupKey, std::unique_ptr<DeviceGroup>> groups_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::unique_ptr<DeviceSlot>> devices_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, NodeEntry> nodes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server::placement::internal

#endif  // CTXSEL_SERVER_PLACEMENT_FLEET_H_
