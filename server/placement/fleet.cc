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
#include "base/status_details.h"
#include "base/status_macros.h"

namespace ctxsel::server::placement::internal {

namespace {

absl::Status IdTaken(size_t i, absl::string_view id, absl::string_view owner) {
  return WithErrorInfo(
      absl::AlreadyExistsError(absl::StrCat("node.devices[", i, "].id: '", id,
                                            "' belongs to node '", owner, "'")),
      kReasonDeviceIdTaken,
      {{"device", std::string(id)}, {"node", std::string(owner)}});
}

}  // namespace

absl::Status Fleet::CheckIdsFree(absl::string_view node,
                                 const std::vector<Device>& devices) const {
  for (size_t i = 0; i < devices.size(); ++i) {
    auto it = devices_.find(devices[i].id);
    if (it != devices_.end() && it->second->node != node) {
      return IdTaken(i, devices[i].id, it->second->node);
    }
  }
  return absl::OkStatus();
}

absl::Status Fleet::ReplaceNode(absl::string_view node,
                                std::vector<Device> devices,
                                ClassChanges* changes) {
  absl::MutexLock lock(&mu_);
  CTXSEL_RETURN_IF_ERROR(CheckIdsFree(node, devices));
  Erase(node);
  Apply(node, std::move(devices), changes);
  PublishListing(node);
  Sweep(changes);
  return absl::OkStatus();
}

absl::Status Fleet::ReplaceAll(std::vector<Device> devices,
                               ClassChanges* changes) {
  std::map<std::string, std::vector<Device>> by_node;
  absl::flat_hash_map<absl::string_view, absl::string_view> owners;
  for (size_t i = 0; i < devices.size(); ++i) {
    auto [owner, added] = owners.emplace(devices[i].id, devices[i].node);
    if (!added && owner->second != devices[i].node) {
      return IdTaken(i, devices[i].id, owner->second);
    }
  }
  for (Device& d : devices) {
    std::string node = d.node;
    by_node[node].push_back(std::move(d));
  }
  absl::MutexLock lock(&mu_);
  std::vector<std::string> gone;
  while (!nodes_.empty()) {
    gone.push_back(nodes_.begin()->first);
    Erase(gone.back());
  }
  for (auto& [node, list] : by_node) Apply(node, std::move(list), changes);
  for (const std::string& node : gone) PublishListing(node);
  for (const auto& [node, list] : by_node) PublishListing(node);
  Sweep(changes);
  return absl::OkStatus();
}

bool Fleet::RemoveNode(absl::string_view node, ClassChanges* changes) {
  absl::MutexLock lock(&mu_);
  if (!nodes_.contains(node)) return false;
  Erase(node);
  PublishListing(node);
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
    if (!slot->identity.uuid.empty()) {
      auto by_uuid = by_uuid_.find(slot->identity.uuid);
      if (by_uuid != by_uuid_.end() && by_uuid->second == slot) {
        by_uuid_.erase(by_uuid);
      }
    }
    devices_.erase(devices_.find(slot->id));  // frees the slot and its key
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

void Fleet::Apply(absl::string_view node, std::vector<Device> devices,
                  ClassChanges* changes) {
  if (devices.empty()) return;
  std::vector<std::pair<int32_t, const DeviceClass*>> layout_slots;
  for (const Device& d : devices) {
    layout_slots.emplace_back(d.index, InternClass(d, changes));
  }
  const NodeLayout* layout = InternLayout(layout_slots);
  NodeEntry& entry = nodes_[node];
  entry.layout = layout;
  entry.devices.reserve(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    Device& d = devices[i];
    auto slot = std::make_unique<DeviceSlot>();
    slot->id = std::move(d.id);
    slot->node = std::string(node);
    slot->index = d.index;
    slot->position = i;
    slot->properties = d.properties;
    slot->identity = d.identity;
    slot->condition = std::move(d.condition);
    slot->device_class = layout_slots[i].second;
    Place(slot.get(), entry);
    entry.devices.push_back(slot.get());
    if (!slot->identity.uuid.empty()) {
      // The later report's wins, keyed by its own string: the earlier
      // slot's may be freed first.
      by_uuid_.erase(slot->identity.uuid);
      by_uuid_.emplace(slot->identity.uuid, slot.get());
    }
    // Ids are unique (NormalizeReport checked the report, CheckIdsFree
    // the fleet), so this never replaces a live slot.
    const absl::string_view id = slot->id;
    devices_.emplace(id, std::move(slot));
  }
  // Partitions: NormalizeReport checked that each parent is a whole device
  // of this report.
  for (DeviceSlot* slot : entry.devices) {
    if (slot->condition.parent.empty()) continue;
    auto parent = devices_.find(slot->condition.parent);
    if (parent == devices_.end() || parent->second->node != node) continue;
    slot->parent = parent->second.get();
    parent->second->children.push_back(slot);
  }
}

const DeviceClass* Fleet::InternClass(const Device& d, ClassChanges* changes) {
  const selector::DeviceCapacity capacity = ClassCapacityOf(d);
  ClassEntry& entry =
      classes_[DeviceClassKey(d.traits, d.sycl_architecture, capacity)];
  ++entry.devices;
  if (entry.device_class == nullptr) {
    entry.device_class = std::make_shared<DeviceClass>(MakeDeviceClass(
        next_class_id_++, d.traits, d.sycl_architecture, capacity));
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
    entry.layout = std::make_shared<NodeLayout>(
        MakeNodeLayout(next_layout_id_++, std::move(slots)));
  }
  return entry.layout.get();
}

DeviceGroup* Fleet::GroupFor(const DeviceClass* c, const NodeLayout* layout,
                             bool suspect, bool excluded) {
  std::unique_ptr<DeviceGroup>& group =
      groups_[GroupKey(c->name, c->id, layout->id, suspect, excluded)];
  if (group == nullptr) {
    group = std::make_unique<DeviceGroup>(c, layout, suspect, excluded);
    if (suspect && !excluded) ++suspect_groups_;
  }
  return group.get();
}

void Fleet::PublishListing(absl::string_view node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    listings_.Publish(node, nullptr);
    return;
  }
  NodeEntry& entry = it->second;
  std::vector<std::shared_ptr<const DeviceClass>> classes;
  for (const DeviceSlot* slot : entry.devices) {
    // Neighbours mostly share a class; a class pinned twice does no harm.
    if (classes.empty() || classes.back().get() != slot->device_class) {
      classes.push_back(classes_.at(slot->device_class->key).device_class);
    }
  }
  entry.listing = NodeListing::Make(std::string(node),
                                    layouts_.at(entry.layout->key).layout,
                                    std::move(classes), entry.devices);
  listings_.Publish(node, entry.listing);
}

std::shared_ptr<const NodeListing> Fleet::Listing(
    absl::string_view node) const {
  return listings_.Find(node);
}

void Fleet::LeaveGroup(DeviceSlot* slot) {
  DeviceGroup* group = slot->group;
  if (group == nullptr) return;
  group->Remove(slot);
  if (group->size() == 0) {
    if (group->suspect() && !group->excluded()) --suspect_groups_;
    groups_.erase(GroupKey(group->device_class().name, group->device_class().id,
                           group->layout().id, group->suspect(),
                           group->excluded()));
  }
  slot->group = nullptr;
}

void Fleet::Place(DeviceSlot* slot, const NodeEntry& node) {
  const Cordon* cordon = nullptr;
  if (auto it = device_cordons_.find(slot->id); it != device_cordons_.end()) {
    cordon = &it->second;
  } else if (auto n = node_cordons_.find(slot->node);
             n != node_cordons_.end()) {
    cordon = &n->second;
  }
  // Out of the group first: it counts its members' cordons.
  LeaveGroup(slot);
  DeviceCondition& c = slot->condition;
  c.cordoned = cordon != nullptr;
  c.draining = cordon != nullptr && cordon->drain;
  c.cordon_reason = cordon != nullptr ? cordon->reason : "";
  const bool excluded = c.cordoned || c.health == DeviceHealth::kUnhealthy;
  const bool suspect = node.suspect || c.health == DeviceHealth::kDegraded;
  slot->group = GroupFor(slot->device_class, node.layout, suspect, excluded);
  slot->group->Add(slot);
}

std::vector<std::string> Fleet::SetCordons(const std::vector<Cordon>& cordons) {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<std::string> touched;  // nodes to re-place
  for (const auto* old : {&device_cordons_, &node_cordons_}) {
    for (const auto& [key, c] : *old) {
      if (auto it = devices_.find(c.device); it != devices_.end()) {
        touched.insert(it->second->node);
      }
      if (!c.node.empty()) touched.insert(c.node);
    }
  }
  device_cordons_.clear();
  node_cordons_.clear();
  for (const Cordon& c : cordons) {
    if (!c.device.empty()) {
      device_cordons_[c.device] = c;
      if (auto it = devices_.find(c.device); it != devices_.end()) {
        touched.insert(it->second->node);
      }
    } else {
      node_cordons_[c.node] = c;
      touched.insert(c.node);
    }
  }
  std::vector<std::string> live;
  for (const std::string& name : touched) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    for (DeviceSlot* slot : it->second.devices) Place(slot, it->second);
    PublishListing(name);
    live.push_back(name);
  }
  std::sort(live.begin(), live.end());
  return live;
}

void Fleet::SetSuspect(absl::string_view node, bool suspect) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.suspect == suspect) return;
  it->second.suspect = suspect;
  for (DeviceSlot* slot : it->second.devices) Place(slot, it->second);
}

absl::Status Fleet::UpdateUtilisations(
    absl::string_view node,
    absl::Span<const std::pair<std::string, double>> updates) {
  if (updates.empty()) return absl::OkStatus();  // a node without devices
  absl::MutexLock lock(&mu_);
  auto entry = nodes_.find(node);
  if (entry == nodes_.end()) {
    return absl::NotFoundError(
        absl::StrCat("node '", node, "' has no live devices"));
  }
  const std::vector<DeviceSlot*>& on_node = entry->second.devices;
  // Look every device up before changing any: all or nothing. Agents beat
  // their devices in report order, so the i-th update is usually the i-th
  // device; anything else takes the fleet-wide index.
  absl::InlinedVector<DeviceSlot*, 16> slots;
  slots.reserve(updates.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    const std::string& id = updates[i].first;
    if (i < on_node.size() && on_node[i]->id == id) {
      slots.push_back(on_node[i]);
      continue;
    }
    auto it = devices_.find(id);
    if (it == devices_.end() || it->second->node != node) {
      return absl::NotFoundError(absl::StrCat("updates[", i, "]: device '", id,
                                              "' is not a device of node '",
                                              node, "'"));
    }
    slots.push_back(it->second.get());
  }
  NodeListing::BeatWriter listed(*entry->second.listing);
  for (size_t i = 0; i < slots.size(); ++i) {
    slots[i]->group->SetUtilisation(slots[i], updates[i].second);
    listed.Set(slots[i]->position, updates[i].second);
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
  out.reserve(group_count());
  ForEachGroup([&](const DeviceGroup* g) { out.push_back(g); });
  return out;
}

const std::vector<DeviceSlot*>* Fleet::Reader::node(
    absl::string_view name) const {
  auto it = fleet_.nodes_.find(name);
  return it == fleet_.nodes_.end() ? nullptr : &it->second.devices;
}

const NodeLayout* Fleet::Reader::layout(absl::string_view name) const {
  auto it = fleet_.nodes_.find(name);
  return it == fleet_.nodes_.end() ? nullptr : it->second.layout;
}

const DeviceSlot* Fleet::Reader::device(absl::string_view id_or_uuid) const {
  if (auto it = fleet_.devices_.find(id_or_uuid); it != fleet_.devices_.end()) {
    return it->second.get();
  }
  auto it = fleet_.by_uuid_.find(id_or_uuid);
  return it == fleet_.by_uuid_.end() ? nullptr : it->second;
}

}  // namespace ctxsel::server::placement::internal
