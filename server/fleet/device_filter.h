// device_filter.h: the device filter — a context selector that picks devices
// by their own traits. One type for both places a request carries one:
// ListDevicesRequest.device_filter (`ctxsel-cli devices ls --device_filter`)
// and Job.device_filter (`ctxsel-cli select --device_filter`), with one
// meaning in both: a device passes when the selector matches it in the fleet
// mapping (fleet_context.h) — its traits as the `device` set, its node's
// devices as the `target_device` sets — whatever job asks.
//
// So a filter may name only the `device` and `target_device` trait sets and
// read no job variable; anything else (`user={condition(N > 4)}`,
// `construct={target}`) would depend on the job and is INVALID_ARGUMENT.
//
//   DeviceFilterCache filters(1024);
//   absl::StatusOr<DeviceFilter> f =
//       filters.Get("device={kind(gpu)}", "device_filter");
//   if (f.ok() && f->Matches(device, node_devices)) ...
#ifndef CTXSEL_SERVER_FLEET_DEVICE_FILTER_H_
#define CTXSEL_SERVER_FLEET_DEVICE_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "selector/selector.h"
#include "server/model/model.h"

namespace ctxsel::server {

class DeviceFilter {
 public:
  // Matches every device.
  DeviceFilter() = default;

  // An empty `text` matches every device. INVALID_ARGUMENT "<field>: L:C:
  // ..." (SelectorFieldError: BadRequest on `field`, ErrorInfo
  // SELECTOR_INVALID with line and column) when it does not parse, names a
  // trait set other than device and target_device, or reads a variable.
  static absl::StatusOr<DeviceFilter> Parse(absl::string_view text,
                                            const std::string& field);

  bool empty() const { return !selector_.has_value(); }
  // The canonical selector text; empty for the empty filter. Equal for
  // equivalent filters (page tokens compare it).
  std::string text() const {
    return selector_.has_value() ? selector_->ToString() : "";
  }

  // Whether a device with `traits`, on a node with `target_devices` (its
  // default device the candidate itself), passes; `reason` says why not
  // ("device.kind: gpu not in {cpu}") when it is not null.
  bool Matches(const selector::DeviceTraits& traits,
               selector::TargetDevicesView target_devices,
               std::string* reason = nullptr) const;
  // The same for an inventory device and its node's devices.
  bool Matches(const Device& device,
               const std::vector<Device>& node_devices) const;

 private:
  explicit DeviceFilter(selector::Selector selector)
      : selector_(std::move(selector)) {}
  // `context` has only the device set; `target_devices` the node's.
  bool MatchesIn(const selector::Context& context,
                 selector::TargetDevicesView target_devices,
                 std::string* reason) const;
  std::optional<selector::Selector> selector_;
};

// One step of a filtered device listing (DeviceStore::ScanDevices): the
// store reads nodes in order, each node's devices by index, and keeps those
// the filter passes. The stopping rule is here, for every store to share.
// A filter's verdict is the same for every device of one class on nodes of
// one layout (fleet_context.h), so a store that groups devices that way
// matches once per pair for the whole listing (`verdicts`).
struct DeviceScan {
  static constexpr int32_t kNoIndex = std::numeric_limits<int32_t>::min();

  explicit DeviceScan(const DeviceFilter* device_filter)
      : filter(device_filter) {}

  // Starts a step: `found` emptied, nothing read yet.
  void Start() {
    found.clear();
    nodes_read = 0;
    devices_read = 0;
  }
  // Whether to read another node: false once max_read devices were read.
  bool NextNode() {
    if (devices_read >= max_read) return false;
    ++nodes_read;
    return true;
  }
  // Whether the device at `index` of the node being read is past the resume
  // point (after_index, first node only); counts it as read.
  bool Reads(int32_t index) {
    if (nodes_read == 1 && index <= after_index) return false;
    ++devices_read;
    return true;
  }
  // Keeps a device that passed; false when the step must stop (found holds
  // max_found).
  bool Keep(Device device) {
    found.push_back(std::move(device));
    return found.size() < max_found;
  }

  const DeviceFilter* filter;
  // Set by the caller before each step.
  int32_t after_index = kNoIndex;
  size_t max_found = 1;
  size_t max_read = std::numeric_limits<size_t>::max();
  // What the step did: the devices that passed, copied; how many of the
  // nodes it was given it read (at least one when given any); how many
  // devices it read.
  std::vector<Device> found;
  size_t nodes_read = 0;
  size_t devices_read = 0;
  // Kept by the store across steps: the verdict by (device class id, node
  // layout id). Both are never reused and name immutable traits.
  absl::flat_hash_map<std::pair<int, int>, bool> verdicts;
};

// Launchers repeat the same filter text; parsing costs more than the rest
// of a Select. Keeps up to `capacity` parsed filters (further ones are
// parsed per request, never evicting); errors are not cached. Thread-safe.
class DeviceFilterCache {
 public:
  explicit DeviceFilterCache(size_t capacity) : capacity_(capacity) {}

  // DeviceFilter::Parse(text, field), from the cache when it can.
  absl::StatusOr<DeviceFilter> Get(absl::string_view text,
                                   const std::string& field) const
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, DeviceFilter> parsed_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_FLEET_DEVICE_FILTER_H_
