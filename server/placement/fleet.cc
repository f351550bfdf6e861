#include "server/placement/fleet.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::server::placement::internal {

struct Fleet::Staged {
  std::string node;
  std::vector<Device> devices;
};

namespace {

absl::Status Bad(size_t i, const Device& d, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("devices[", i, "] (id '", d.id, "'): ", what));
}

// Checks one device of a report for `node` and normalises it.
absl::Status CheckDevice(absl::string_view node, size_t i, Device& d) {
  if (d.node.empty()) d.node = std::string(node);
  if (d.node != node) {
    return Bad(i, d,
               absl::StrCat("node: '", d.node, "' is not the reporting node '",
                            node, "'"));
  }
  if (d.id.empty()) return Bad(i, d, "id: empty");
  if (d.index < -1) return Bad(i, d, absl::StrCat("index: ", d.index, " < -1"));
  double& u = d.properties.utilisation;
  if (std::isnan(u)) return Bad(i, d, "utilisation: not a number");
  u = std::min(1.0, std::max(0.0, u));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Fleet::Staged> Fleet::Stage(absl::string_view node,
                                           std::vector<Device> devices) const {
  if (node.empty()) return absl::InvalidArgumentError("node: empty");
  absl::flat_hash_set<std::string> ids;
  absl::flat_hash_set<int32_t> indices;
  for (size_t i = 0; i < devices.size(); ++i) {
    Device& d = devices[i];
    if (absl::Status s = CheckDevice(node, i, d); !s.ok()) return s;
    if (!ids.insert(d.id).second) return Bad(i, d, "id: used twice");
    if (!indices.insert(d.index).second) {
      return Bad(i, d, absl::StrCat("index: ", d.index, " used twice"));
    }
  }
  return Staged{std::string(node), std::move(devices)};
}

absl::Status Fleet::CheckIdsFree(const Staged& staged,
                                 absl::string_view replacing) const {
  for (size_t i = 0; i < staged.devices.size(); ++i) {
    const Device& d = staged.devices[i];
    auto it = devices_.find(d.id);
    if (it != devices_.end() && it->second->node != replacing) {
      return Bad(i, d,
                 absl::StrCat("id: already a device of node '",
                              it->second->node, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status Fleet::ReplaceNode(absl::string_view node,
                                std::vector<Device> devices,
                                ClassChanges* changes) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Staged> staged = Stage(node, std::move(devices));
  if (!staged.ok()) return staged.status();
  if (absl::Status s = CheckIdsFree(*staged, node); !s.ok()) return s;
  Erase(node);
  Apply(*std::move(staged), changes);
  Sweep(changes);
  return absl::OkStatus();
}

absl::Status Fleet::ReplaceAll(std::vector<Device> devices,
                               ClassChanges* changes) {
  std::map<std::string, std::vector<Device>> by_node;
  for (Device& d : devices) by_node[d.node].push_back(std::move(d));
  absl::MutexLock lock(&mu_);
  std::vector<Staged> staged;
  absl::flat_hash_set<std::string> ids;
  for (auto& [node, list] : by_node) {
    absl::StatusOr<Staged> s = Stage(node, std::move(list));
    if (!s.ok()) return s.status();
    for (const Device& d : s->devices) {
      if (!ids.insert(d.id).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("device '", d.id, "': id used on two nodes"));
      }
    }
    staged.push_back(*std::move(s));
  }
  while (!nodes_.empty()) Erase(std::string(nodes_.begin()->first));
  for (Staged& s : staged) Apply(std::move(s), changes);
  Sweep(changes);
  return absl::OkStatus();
}

bool Fleet::RemoveNode(absl::string_view node, ClassChanges* changes) {
  absl::MutexLock lock(&mu_);
  if (!nodes_.contains(node)) return false;
  Erase(node);
  Sweep(changes);
  return true;
}

void Fleet::Erase(absl::string_view node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  for (DeviceSlot* slot : it->second.devices) {
    LeaveGroup(slot);
    const std::string& key = slot->device_class->key;
    if (--classes_[key].devices == 0) unused_classes_.push_back(key);
    std::string id = slot->id;
    devices_.erase(id);  // frees the slot
  }
  const std::string& layout_key = it->second.layout->key;
  if (--layouts_[layout_key].nodes == 0) unused_layouts_.push_back(layout_key);
  nodes_.erase(it);
}

void Fleet::Sweep(ClassChanges* changes) {
  // Layouts first: they point at classes.
  for (const std::string& key : unused_layouts_) {
    auto it = layouts_.find(key);
    if (it != layouts_.end() && it->second.nodes == 0) layouts_.erase(it);
  }
  unused_layouts_.clear();
  for (const std::string& key : unused_classes_) {
    auto it = classes_.find(key);
    if (it == classes_.end() || it->second.devices != 0) continue;
    if (changes != nullptr)
      changes->freed.push_back(it->second.device_class->id);
    classes_.erase(it);
  }
  unused_classes_.clear();
}

void Fleet::Apply(Staged staged, ClassChanges* changes) {
  if (staged.devices.empty()) return;
  std::vector<std::pair<int32_t, const DeviceClass*>> layout_slots;
  for (const Device& d : staged.devices) {
    layout_slots.emplace_back(d.index, InternClass(d, changes));
  }
  const NodeLayout* layout = InternLayout(layout_slots);
  NodeEntry& entry = nodes_[staged.node];
  entry.layout = layout;
  for (size_t i = 0; i < staged.devices.size(); ++i) {
    Device& d = staged.devices[i];
    auto slot = std::make_unique<DeviceSlot>();
    slot->id = std::move(d.id);
    slot->node = staged.node;
    slot->index = d.index;
    slot->properties = d.properties;
    slot->identity = d.identity;
    slot->device_class = layout_slots[i].second;
    slot->group = GroupFor(slot->device_class, layout, /*suspect=*/false);
    slot->group->Add(slot.get());
    entry.devices.push_back(slot.get());
    devices_[slot->id] = std::move(slot);
  }
}

const DeviceClass* Fleet::InternClass(const Device& d, ClassChanges* changes) {
  ClassEntry& entry = classes_[DeviceClassKey(d.traits, d.sycl_architecture)];
  ++entry.devices;
  if (entry.device_class == nullptr) {
    entry.device_class = std::make_unique<DeviceClass>(
        MakeDeviceClass(next_class_id_++, d.traits, d.sycl_architecture));
    if (changes != nullptr)
      changes->created.push_back(entry.device_class.get());
  }
  return entry.device_class.get();
}

const NodeLayout* Fleet::InternLayout(
    std::vector<std::pair<int32_t, const DeviceClass*>> slots) {
  std::string key = NodeLayoutKey(slots);
  LayoutEntry& entry = layouts_[key];
  ++entry.nodes;
  if (entry.layout == nullptr) {
    entry.layout = std::make_unique<NodeLayout>(
        MakeNodeLayout(next_layout_id_++, std::move(slots)));
  }
  return entry.layout.get();
}

DeviceGroup* Fleet::GroupFor(const DeviceClass* c, const NodeLayout* layout,
                             bool suspect) {
  std::unique_ptr<DeviceGroup>& group =
      groups_[GroupKey(c->name, c->id, layout->id, suspect)];
  if (group == nullptr) {
    group = std::make_unique<DeviceGroup>(c, layout, suspect);
  }
  return group.get();
}

void Fleet::LeaveGroup(DeviceSlot* slot) {
  DeviceGroup* group = slot->group;
  group->Remove(slot);
  if (group->size() == 0) {
    groups_.erase(GroupKey(group->device_class().name, group->device_class().id,
                           group->layout().id, group->suspect()));
  }
  slot->group = nullptr;
}

void Fleet::SetSuspect(absl::string_view node, bool suspect) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.suspect == suspect) return;
  it->second.suspect = suspect;
  for (DeviceSlot* slot : it->second.devices) {
    LeaveGroup(slot);
    slot->group = GroupFor(slot->device_class, it->second.layout, suspect);
    slot->group->Add(slot);
  }
}

absl::Status Fleet::UpdateUtilisations(
    absl::string_view node,
    absl::Span<const std::pair<std::string, double>> updates) {
  for (size_t i = 0; i < updates.size(); ++i) {
    if (std::isnan(updates[i].second)) {
      return absl::InvalidArgumentError(
          absl::StrCat("updates[", i, "] (device '", updates[i].first,
                       "'): utilisation: not a number"));
    }
  }
  absl::MutexLock lock(&mu_);
  // Look every device up before changing any: all or nothing.
  absl::InlinedVector<DeviceSlot*, 16> slots;
  slots.reserve(updates.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    auto it = devices_.find(updates[i].first);
    if (it == devices_.end() || it->second->node != node) {
      return absl::NotFoundError(
          absl::StrCat("updates[", i, "]: device '", updates[i].first,
                       "' is not a device of node '", node, "'"));
    }
    slots.push_back(it->second.get());
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    const double u = std::min(1.0, std::max(0.0, updates[i].second));
    slots[i]->group->SetUtilisation(slots[i], u);
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceClassNames> Fleet::ClassOf(
    absl::string_view device_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = devices_.find(device_id);
  if (it == devices_.end()) {
    return absl::NotFoundError(
        absl::StrCat("device '", device_id, "' is not in the fleet"));
  }
  const DeviceClass& device_class = *it->second->device_class;
  return DeviceClassNames{device_class.name, device_class.short_name};
}

std::vector<const DeviceClass*> Fleet::Classes() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<const DeviceClass*> out;
  out.reserve(classes_.size());
  for (const auto& [key, entry] : classes_) {
    out.push_back(entry.device_class.get());
  }
  std::sort(
      out.begin(), out.end(),
      [](const DeviceClass* a, const DeviceClass* b) { return a->id < b->id; });
  return out;
}

size_t Fleet::class_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return classes_.size();
}

size_t Fleet::layout_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return layouts_.size();
}

Fleet::Reader::Reader(const Fleet& fleet) : fleet_(fleet) {
  fleet_.mu_.ReaderLock();
}

Fleet::Reader::~Reader() { fleet_.mu_.ReaderUnlock(); }

std::vector<const DeviceGroup*> Fleet::Reader::groups() const {
  std::vector<const DeviceGroup*> out;
  out.reserve(fleet_.groups_.size());
  for (const auto& [key, group] : fleet_.groups_) out.push_back(group.get());
  return out;
}

bool Fleet::Reader::has_suspect() const {
  for (const auto& [key, group] : fleet_.groups_) {
    if (group->suspect()) return true;
  }
  return false;
}

const std::vector<DeviceSlot*>* Fleet::Reader::node(
    absl::string_view name) const {
  auto it = fleet_.nodes_.find(name);
  return it == fleet_.nodes_.end() ? nullptr : &it->second.devices;
}

}  // namespace ctxsel::server::placement::internal
