// node_listing.h: what a device listing reads of the fleet, published so
// that a listing takes no lock a heartbeat takes.
//
// Every heartbeat takes the Fleet's lock exclusively (it re-sorts its
// devices' groups). Listings used to read the Fleet under that lock's
// reader side, and ten listers paging in a tight loop made the beats wait
// on it. Now the Fleet publishes, per node, an immutable NodeListing: the
// node's devices as reported, their classes and layout pinned, made by the
// writers that change them (a report, a removal, a cordon) and found
// through a ListingIndex, whose striped locks only those writers and the
// listings take. Utilisation, the one thing a beat changes, sits in the
// record as atomics behind a sequence counter (a seqlock): the beat writes
// them in place under the fleet lock it holds anyway, and a reader gets a
// beat's values whole, retrying while one is being written (nanoseconds),
// never making the beat wait. A beat copies and publishes nothing; a report
// or cordon replaces only its node's record.
//
// The cost is memory: a record copies each device's reported fields (not
// its class's traits), packed (ListedDevice): about 90 bytes a device and
// its strings, in one allocation per node for them all.
//
//   ListingIndex index;                          // in the Fleet
//   index.Publish("n1", NodeListing::Make(...));  // a writer, fleet lock held
//   std::shared_ptr<const NodeListing> n = index.Find("n1");  // no fleet lock
//   NodeListing::Utilisations u;
//   n->ReadUtilisations(&u);
//   Device d = n->ToDevice(0, u[0]);
#ifndef CTXSEL_SERVER_PLACEMENT_NODE_LISTING_H_
#define CTXSEL_SERVER_PLACEMENT_NODE_LISTING_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "server/model/model.h"
#include "server/placement/device_class.h"
#include "server/placement/device_group.h"

namespace ctxsel::server::placement::internal {

// A device as reported, less its class's traits and its utilisation, as
// its NodeListing keeps it: its strings sit end to end in the record's one
// text buffer and its numbers are packed, about 90 bytes a device and no
// allocation of its own (a copy of the slot's fields was about 300 bytes,
// and an allocation per id of more than 15 bytes). NodeListing::ToDevice
// reads the rest.
class ListedDevice {
 public:
  const DeviceClass* device_class = nullptr;  // pinned by the NodeListing
  int32_t index = 0;

 private:
  friend class NodeListing;
  // Where a string sits in the record's text buffer.
  struct Piece {
    uint32_t offset = 0;
    uint32_t size = 0;
  };

  uint64_t memory_bytes_ = 0;
  int32_t compute_units_ = 0;
  int32_t claim_capacity_ = 1;
  int32_t vendor_index_ = -1;
  DeviceHealth health_ = DeviceHealth::kHealthy;
  Piece id_, uuid_, pci_bus_id_, health_reason_, parent_, cordon_reason_;
  bool cordoned_ = false;
  bool draining_ = false;
};

// One node's devices as a listing sees them. Immutable but for the
// utilisations, which one writer at a time (the fleet lock's holder)
// changes through a BeatWriter.
class NodeListing {
 public:
  using Utilisations = absl::InlinedVector<double, 16>;

  // The listing of `node`'s `slots` (in the node's order), with their
  // utilisation now; `layout` and `classes` (every class of the slots) are
  // kept alive while the record is.
  static std::shared_ptr<NodeListing> Make(
      std::string node, std::shared_ptr<const NodeLayout> layout,
      std::vector<std::shared_ptr<const DeviceClass>> classes,
      absl::Span<const DeviceSlot* const> slots);

  const std::string& node() const { return node_; }
  const NodeLayout& layout() const { return *layout_; }
  absl::Span<const ListedDevice> devices() const { return devices_; }

  // Every device's utilisation, by position, as one beat left them all.
  void ReadUtilisations(Utilisations* out) const;
  // The device at `position`, as DeviceSlot::ToDevice gives it.
  Device ToDevice(size_t position, double utilisation) const;

  // Writes one beat's values: readers see all of them or none. The caller
  // serialises writers.
  class BeatWriter {
   public:
    explicit BeatWriter(NodeListing& listing);
    ~BeatWriter();
    BeatWriter(const BeatWriter&) = delete;
    BeatWriter& operator=(const BeatWriter&) = delete;
    void Set(size_t position, double utilisation);

   private:
    NodeListing& listing_;
    uint64_t sequence_;
  };

 private:
  NodeListing() = default;

  // What a beat writes comes first, in the record's own allocation for a
  // node of up to kInline devices: a beat touches no more cache lines.
  static constexpr size_t kInline = 8;
  std::atomic<uint64_t> sequence_{0};  // odd while a beat writes
  std::atomic<double>* utilisation_ = inline_utilisation_.data();
  std::array<std::atomic<double>, kInline> inline_utilisation_;
  std::unique_ptr<std::atomic<double>[]> more_utilisation_;  // larger nodes
  std::string node_;
  std::shared_ptr<const NodeLayout> layout_;
  std::vector<std::shared_ptr<const DeviceClass>> classes_;
  std::vector<ListedDevice> devices_;
  // Every device's strings, end to end (ListedDevice::Piece).
  std::unique_ptr<char[]> text_;
  absl::string_view Text(ListedDevice::Piece piece) const {
    return absl::string_view(text_.get() + piece.offset, piece.size);
  }
};

// Node name -> its current NodeListing. Readers (listings) share a
// stripe's lock; writers (the Fleet's report, removal and cordon paths)
// take it for a map update. Heartbeats never take it.
class ListingIndex {
 public:
  // Makes `listing` `node`'s; null removes the node.
  void Publish(absl::string_view node,
               std::shared_ptr<const NodeListing> listing);
  // `node`'s listing; null for a node with no devices.
  std::shared_ptr<const NodeListing> Find(absl::string_view node) const;

 private:
  static constexpr size_t kStripes = 64;
  // A cache line each, so that listers on different stripes share none.
  struct alignas(64) Stripe {
    mutable absl::Mutex mu;
    absl::flat_hash_map<std::string, std::shared_ptr<const NodeListing>> nodes
        ABSL_GUARDED_BY(mu);
  };
  static size_t StripeOf(absl::string_view node);

  std::array<Stripe, kStripes> stripes_;
};

}  // namespace ctxsel::server::placement::internal

#endif  // CTXSEL_SERVER_PLACEMENT_NODE_LISTING_H_
