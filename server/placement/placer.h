// placer.h: decides which variant of a kernel runs on which device.
//
// The Placer holds the registered variants of every kernel and the live
// devices of the fleet, and answers Select(job) / Explain(job) the way
// docs/placement.md describes (and Coverage(query), docs/coverage.md, from
// the same resolutions):
//
//   * Devices with identical traits (kind, arch, isa, vendor, extension and
//     SYCL architecture) form a *device class*; nodes whose devices have the
//     same classes at the same indices share a *node layout*.
//   * Per kernel x device class x job signature (construct and
//     implementation traits) the engine's static Resolution is computed once
//     — up front for the signatures already seen when variants or classes
//     change, on first use otherwise — and shared by every request.
//   * A Select walks only the dynamic prefix of each class's Resolution with
//     the job's variables and the target devices of the class's node layout,
//     picks the classes whose selected variant scores highest (the base
//     function is a candidate on every class, below every variant) and lets
//     the policy pick one of their devices from per-class ordered load
//     structures. Its cost grows with classes, layouts and candidates, not
//     with devices.
//
// Thread safety: every method may be called from any thread. Select and
// Explain (and Coverage) read an immutable snapshot published by the writers
// (SetVariants, RemoveKernel, SetNodeDevices, RemoveNode, SetDevices) with an
// atomic pointer swap; writers are serialised among themselves and never hold a
// lock a reader needs while they resolve. Device-level state (devices,
// utilisation, the per-class ordered load structures) sits behind one
// reader/writer lock that inventory writers and UpdateUtilisations hold
// only for O(log n) per device (once per node report or heartbeat), and
// Select holds shared while it picks; listings (NodeDevices, ScanDevices)
// take none of it, reading records the writers publish per node
// (node_listing.h), into which a heartbeat writes its values. A claiming Select
// asks its ClaimCheck about each device it considers while it holds that lock;
// the caller (server/claims/claims.h) makes pick and claim one atomic step by
// holding its own lock around the Select.
//
// Example:
//
//   Placer placer;
//   CTXSEL_RETURN_IF_ERROR(placer.SetVariants("saxpy", variants));
//   CTXSEL_RETURN_IF_ERROR(placer.SetNodeDevices("node7", devices));
//   placer.UpdateUtilisations("node7", {{"node7/gpu0", 0.4}}).IgnoreError();
//   Job job;
//   job.kernel = "saxpy";
//   absl::StatusOr<Placement> p = placer.Select(job);
#ifndef CTXSEL_SERVER_PLACEMENT_PLACER_H_
#define CTXSEL_SERVER_PLACEMENT_PLACER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "server/fleet/device_filter.h"
#include "server/model/model.h"
#include "server/placement/coverage.h"
#include "server/placement/device_class.h"
#include "server/placement/kernel_entry.h"
#include "server/placement/placement.h"

namespace ctxsel::server::placement {

struct PlacerOptions {
  // Job signatures (construct + implementation traits) whose Resolutions are
  // cached per kernel; further signatures are resolved per request.
  int max_signatures_per_kernel = 256;
  // Alternatives returned when Job::top_k is 0 or negative.
  int default_top_k = 3;
  // Alternatives never exceed this, whatever the job asks.
  int max_top_k = 64;
  // Parsed device filters kept for later jobs.
  int max_cached_filters = 1024;
};

struct DeviceClass;
namespace internal {
class Fleet;
struct FleetClassChanges;
struct Snapshot;
struct Decision;
}  // namespace internal

class Placer {
 public:
  explicit Placer(PlacerOptions options = {});
  ~Placer();
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  // --- Variants -----------------------------------------------------------

  // Replaces every variant of `kernel` with `variants` (any order; `order`
  // decides ties) and resolves them for the device classes and signatures
  // already known. An empty list removes the kernel. Errors as
  // CheckKernelVariants (server/registry/kernel_variants.h) gives them: the
  // check the registry made before it stored the list.
  absl::Status SetVariants(absl::string_view kernel,
                           std::vector<Variant> variants);

  // Forgets `kernel`; false if it was not known.
  bool RemoveKernel(absl::string_view kernel);

  // --- Inventory ----------------------------------------------------------

  // The Placer's Fleet is where device state lives, utilisation included:
  // the inventory keeps liveness, events and listings and reads devices
  // from here (server/placement/placer_bridge.h). Reports and beats are checked
  // once, before they get here (NormalizeReport, CheckBeat in
  // server/fleet/node_report.h); only what needs the fleet is checked again.

  // Replaces the devices of `node` (a full report NormalizeReport accepted;
  // an empty list removes the node). AlreadyExistsError when a device id
  // is another node's; nothing changes then.
  absl::Status SetNodeDevices(absl::string_view node,
                              std::vector<Device> devices);

  // Removes `node` and its devices (TTL expiry); false if it was not known.
  bool RemoveNode(absl::string_view node);

  // Replaces the whole fleet (e.g. at start from a saved inventory), each
  // node's devices as SetNodeDevices takes them; all or nothing,
  // AlreadyExistsError for an id on two nodes.
  absl::Status SetDevices(std::vector<Device> devices);

  // Records one heartbeat of `node`: each (device id, utilisation in
  // [0, 1], as CheckBeat accepts it) pair, under a single hold of the fleet
  // lock (one exclusive lock per beat, not per device). Cheap: no snapshot
  // is rebuilt. All or nothing: NotFoundError for a device that is not a
  // live device of `node`.
  absl::Status UpdateUtilisations(
      absl::string_view node,
      absl::Span<const std::pair<std::string, double>> updates);

  // Marks `node`'s devices suspect (its heartbeat is overdue): Select picks
  // them only when no healthy device can serve the job. Cheap: no snapshot
  // is rebuilt. No-op for an unknown node.
  void SetNodeSuspect(absl::string_view node, bool suspect);

  // Replaces the operators' cordons (Fleet::SetCordons): placement skips
  // cordoned devices, listings and Explain show them. Cheap: no snapshot
  // is rebuilt. Returns the live nodes an old or new cordon covers.
  std::vector<std::string> SetCordons(const std::vector<Cordon>& cordons);

  // The devices of `node` as they are now (utilisation included, as one
  // beat left them), by index as reported; empty for an unknown node. For
  // listings: it reads the node's published record and takes no lock a
  // heartbeat or a Select takes (node_listing.h).
  std::vector<Device> NodeDevices(absl::string_view node) const;

  // One step of a filtered listing (DeviceStore::ScanDevices), from the
  // nodes' published records like NodeDevices: the filter is matched once
  // per device class and node layout for the whole listing, and only
  // devices that pass are copied.
  void ScanDevices(absl::Span<const std::string> nodes, DeviceScan* scan) const;

  // The device class of a live device (for inventory listings);
  // NotFoundError for an unknown device.
  absl::StatusOr<DeviceClassNames> DeviceClassOf(
      absl::string_view device_id) const;

  // The parsed device filters Select uses, for ListDevices to share.
  const DeviceFilterCache& device_filters() const { return filters_; }

  // --- Placement ----------------------------------------------------------

  // Picks variant, node and device for `job`. With `claims`, only devices
  // that have claim room (ClaimCheck::HasRoom); when the best device
  // classes have none, the next best compete.
  //   NotFoundError            the kernel has no variants;
  //   InvalidArgumentError     a bad job field (device_filter with its
  //                            line:column, server/fleet/device_filter.h, too
  //                            many construct traits, a variable the kernel's
  //                            selectors read missing);
  //   FailedPreconditionError  no live device fits the constraints; the
  //                            message says why each class was rejected;
  //   ResourceExhaustedError   (with `claims`) devices fit, but none has
  //                            room: "all N fitting devices are claimed".
  // With Job::count = N > 1: N ranks (Placement::ranks) on distinct
  // devices, each the best device the earlier ranks left, over one view of
  // the fleet; fewer than N is an error, never a partial answer
  // (FailedPrecondition when fewer fit, ResourceExhausted when fewer have
  // claim room). Cost: N one-device Selects. With Job::same_node all on
  // one node: the best first rank's, else the next best node's (8 tried).
  absl::StatusOr<Placement> Select(const Job& job,
                                   const ClaimCheck* claims = nullptr) const;

  // Everything Select looked at, class by class and variant by variant.
  // Fails only where Select fails with NotFound or InvalidArgument; a job
  // that fits no device gives a report whose `status` says so.
  absl::StatusOr<PlacementReport> Explain(const Job& job) const;

  // Where the kernel's variants run over the live fleet for a job context
  // (and a matrix of job points), optionally for a what-if variant set and
  // hypothetical nodes, never stored (coverage.h). Reads the same snapshot
  // and Resolutions as Select and holds the fleet lock shared for
  // O(classes x points): it does not slow Select.
  //   NotFoundError         the kernel has no variants (and none is added);
  //   InvalidArgumentError  a bad query field, named in the message.
  absl::StatusOr<CoverageReport> Coverage(const CoverageQuery& query) const;

  // How the static-resolution caches have fared since construction (for
  // metrics): Select and Explain lookups that found a kernel's resolution
  // for a job signature and device class cached or computed it, and the
  // up-front rebuilds after variants or device classes changed.
  struct CacheStats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t rebuilds = 0;
    absl::Duration rebuild_time;
  };
  CacheStats cache_stats() const;

 private:
  std::shared_ptr<const internal::Snapshot> snapshot() const;
  void Publish(std::shared_ptr<const internal::Snapshot> snapshot);
  // Resolves the signatures every kernel has cached for classes that just
  // appeared, so that the first jobs on them find the work done, and drops
  // the resolutions of classes that left the fleet.
  void ApplyClassChanges(const internal::FleetClassChanges& changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // With `placement`, a one-device Select's answer is written there
  // (internal::Request::placement).
  absl::StatusOr<internal::Decision> Decide(
      const Job& job, bool explain, const ClaimCheck* claims,
      Placement* placement = nullptr) const;

  const PlacerOptions options_;
  mutable internal::ResolutionCounters counters_;
  absl::Mutex write_mu_;  // serialises writers; never taken by readers
  std::unique_ptr<internal::Fleet> fleet_;
  std::shared_ptr<const internal::Snapshot> snapshot_;  // atomic access only
  mutable std::atomic<uint64_t> spread_ticket_{0};      // spread's round-robin
  DeviceFilterCache filters_;
  mutable internal::SignatureIds signature_ids_;  // a cache
};

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_PLACER_H_
