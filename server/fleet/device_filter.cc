#include "server/fleet/device_filter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "selector/selector_error.h"
#include "server/fleet/fleet_context.h"
#include "server/model/selector_field_error.h"

namespace ctxsel::server {
namespace {

// The trait sets that describe a device rather than a job.
bool IsDeviceSet(absl::string_view set) {
  return set == "device" || set == "target_device";
}

}  // namespace

absl::StatusOr<DeviceFilter> DeviceFilter::Parse(absl::string_view text,
                                                 const std::string& field) {
  if (text.empty()) return DeviceFilter();
  absl::StatusOr<selector::Selector> parsed = selector::Selector::Parse(text);
  if (!parsed.ok()) return SelectorFieldError(field, parsed.status());
  for (const auto& [set, position] : parsed->trait_sets()) {
    if (IsDeviceSet(set)) continue;
    selector::SelectorError error;
    error.position = position;
    error.message = absl::StrCat(
        "a device filter names only the device and target_device trait "
        "sets, not '",
        set, "': it must not depend on the job");
    return SelectorFieldError(field, selector::MakeSelectorError(error));
  }
  if (std::vector<std::string> variables = parsed->variables();
      !variables.empty()) {
    return SelectorFieldError(
        field, absl::InvalidArgumentError(
                   absl::StrCat("a device filter reads no job variable, not ",
                                absl::StrJoin(variables, ", "),
                                ": it must not depend on the job")));
  }
  return DeviceFilter(*std::move(parsed));
}

bool DeviceFilter::Matches(const selector::DeviceTraits& traits,
                           selector::TargetDevicesView target_devices,
                           std::string* reason) const {
  if (!selector_.has_value()) return true;
  selector::Context context;
  context.device = traits;
  return MatchesIn(context, target_devices, reason);
}

bool DeviceFilter::Matches(const Device& device,
                           const std::vector<Device>& node_devices) const {
  if (!selector_.has_value()) return true;
  if (!selector_->has_target_device()) {
    // The node's devices matter only to target_device: copying their traits
    // for every device made a 5,000-device listing take seconds.
    selector::Context context;
    context.device = device.traits;
    return MatchesIn(context, selector::TargetDevicesView(), nullptr);
  }
  const selector::Context context = DeviceContext(device, node_devices);
  return MatchesIn(context, context.target_devices, nullptr);
}

bool DeviceFilter::MatchesIn(const selector::Context& context,
                             selector::TargetDevicesView target_devices,
                             std::string* reason) const {
  absl::StatusOr<selector::Match> match =
      selector::MatchSelector(*selector_, context, target_devices);
  if (!match.ok()) {
    if (reason != nullptr) *reason = std::string(match.status().message());
    return false;
  }
  if (!match->compatible && reason != nullptr) *reason = match->reason;
  return match->compatible;
}

absl::StatusOr<DeviceFilter> DeviceFilterCache::Get(
    absl::string_view text, const std::string& field) const {
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = parsed_.find(text);
    if (it != parsed_.end()) return it->second;
  }
  CTXSEL_ASSIGN_OR_RETURN(DeviceFilter parsed,
                          DeviceFilter::Parse(text, field));
  absl::MutexLock lock(&mu_);
  if (parsed_.size() < capacity_) parsed_.emplace(std::string(text), parsed);
  return parsed;
}

size_t DeviceFilterCache::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return parsed_.size();
}

}  // namespace ctxsel::server
