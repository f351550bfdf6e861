#include "server/device_match.h"

#include "absl/strings/str_cat.h"
#include "server/fleet_context.h"
#include "server/selector_field_error.h"

namespace ctxsel::server {

absl::StatusOr<DeviceMatcher> DeviceMatcher::Parse(const std::string& text,
                                                   const std::string& field) {
  if (text.empty()) return DeviceMatcher(std::nullopt);
  absl::StatusOr<selector::Selector> parsed = selector::Selector::Parse(text);
  if (!parsed.ok()) {
    return SelectorFieldError(field, parsed.status());
  }
  return DeviceMatcher(*std::move(parsed));
}

bool DeviceMatcher::Matches(const Device& device,
                            const std::vector<Device>& node_devices) const {
  if (!selector_.has_value()) return true;
  absl::StatusOr<selector::Match> match =
      selector::MatchSelector(*selector_, DeviceContext(device, node_devices));
  return match.ok() && match->compatible;
}

}  // namespace ctxsel::server
