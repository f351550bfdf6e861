#include "server/placement/node_listing.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/hash/hash.h"

namespace ctxsel::server::placement::internal {

std::shared_ptr<NodeListing> NodeListing::Make(
    std::string node, std::shared_ptr<const NodeLayout> layout,
    std::vector<std::shared_ptr<const DeviceClass>> classes,
    absl::Span<const DeviceSlot* const> slots) {
  std::shared_ptr<NodeListing> listing(new NodeListing());
  listing->node_ = std::move(node);
  listing->layout_ = std::move(layout);
  listing->classes_ = std::move(classes);
  listing->devices_.reserve(slots.size());
  if (slots.size() > kInline) {
    listing->more_utilisation_ =
        std::make_unique<std::atomic<double>[]>(slots.size());
    listing->utilisation_ = listing->more_utilisation_.get();
  }
  size_t text_size = 0;
  for (const DeviceSlot* slot : slots) {
    text_size += slot->id.size() + slot->identity.uuid.size() +
                 slot->identity.pci_bus_id.size() +
                 slot->condition.health_reason.size() +
                 slot->condition.parent.size() +
                 slot->condition.cordon_reason.size();
  }
  listing->text_ = std::make_unique<char[]>(text_size);
  char* const text = listing->text_.get();
  size_t used = 0;
  auto piece = [text, &used](const std::string& s) {
    ListedDevice::Piece p{static_cast<uint32_t>(used),
                          static_cast<uint32_t>(s.size())};
    s.copy(text + used, s.size());
    used += s.size();
    return p;
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    const DeviceSlot& slot = *slots[i];
    ListedDevice& d = listing->devices_.emplace_back();
    d.index = slot.index;
    d.device_class = slot.device_class;
    d.memory_bytes_ = slot.properties.memory_bytes;
    d.compute_units_ = slot.properties.compute_units;
    d.claim_capacity_ = slot.properties.claim_capacity;
    d.vendor_index_ = slot.identity.vendor_index;
    d.health_ = slot.condition.health;
    d.cordoned_ = slot.condition.cordoned;
    d.draining_ = slot.condition.draining;
    d.id_ = piece(slot.id);
    d.uuid_ = piece(slot.identity.uuid);
    d.pci_bus_id_ = piece(slot.identity.pci_bus_id);
    d.health_reason_ = piece(slot.condition.health_reason);
    d.parent_ = piece(slot.condition.parent);
    d.cordon_reason_ = piece(slot.condition.cordon_reason);
    listing->utilisation_[i].store(slot.properties.utilisation,
                                   std::memory_order_relaxed);
  }
  return listing;
}

void NodeListing::ReadUtilisations(Utilisations* out) const {
  out->resize(devices_.size());
  // A seqlock's read: values read between two equal even sequences are one
  // beat's.
  while (true) {
    const uint64_t before = sequence_.load(std::memory_order_acquire);
    if (before % 2 == 1) continue;  // a beat is writing
    for (size_t i = 0; i < devices_.size(); ++i) {
      (*out)[i] = utilisation_[i].load(std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) == before) return;
  }
}

Device NodeListing::ToDevice(size_t position, double utilisation) const {
  const ListedDevice& listed = devices_[position];
  Device d;
  d.id = std::string(Text(listed.id_));
  d.node = node_;
  d.index = listed.index;
  d.sycl_architecture = listed.device_class->sycl_architecture;
  d.traits = listed.device_class->traits;
  d.properties.memory_bytes = listed.memory_bytes_;
  d.properties.compute_units = listed.compute_units_;
  d.properties.claim_capacity = listed.claim_capacity_;
  d.properties.utilisation = utilisation;
  d.identity.uuid = std::string(Text(listed.uuid_));
  d.identity.pci_bus_id = std::string(Text(listed.pci_bus_id_));
  d.identity.vendor_index = listed.vendor_index_;
  d.condition.health = listed.health_;
  d.condition.health_reason = std::string(Text(listed.health_reason_));
  d.condition.parent = std::string(Text(listed.parent_));
  d.condition.cordoned = listed.cordoned_;
  d.condition.draining = listed.draining_;
  d.condition.cordon_reason = std::string(Text(listed.cordon_reason_));
  return d;
}

NodeListing::BeatWriter::BeatWriter(NodeListing& listing)
    : listing_(listing),
      sequence_(listing.sequence_.load(std::memory_order_relaxed)) {
  listing_.sequence_.store(sequence_ + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

NodeListing::BeatWriter::~BeatWriter() {
  listing_.sequence_.store(sequence_ + 2, std::memory_order_release);
}

void NodeListing::BeatWriter::Set(size_t position, double utilisation) {
  listing_.utilisation_[position].store(utilisation, std::memory_order_relaxed);
}

size_t ListingIndex::StripeOf(absl::string_view node) {
  return absl::Hash<absl::string_view>{}(node) % kStripes;
}

void ListingIndex::Publish(absl::string_view node,
                           std::shared_ptr<const NodeListing> listing) {
  Stripe& stripe = stripes_[StripeOf(node)];
  std::shared_ptr<const NodeListing> old;  // freed after the lock
  absl::MutexLock lock(&stripe.mu);
  if (listing == nullptr) {
    auto it = stripe.nodes.find(node);
    if (it == stripe.nodes.end()) return;
    old = std::move(it->second);
    stripe.nodes.erase(it);
    return;
  }
  std::shared_ptr<const NodeListing>& slot = stripe.nodes[node];
  old = std::exchange(slot, std::move(listing));
}

std::shared_ptr<const NodeListing> ListingIndex::Find(
    absl::string_view node) const {
  const Stripe& stripe = stripes_[StripeOf(node)];
  absl::ReaderMutexLock lock(&stripe.mu);
  auto it = stripe.nodes.find(node);
  return it == stripe.nodes.end() ? nullptr : it->second;
}

}  // namespace ctxsel::server::placement::internal
