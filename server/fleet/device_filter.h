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
