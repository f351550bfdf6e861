#include "server/device_match.h"

#include "absl/strings/str_cat.h"

namespace ctxsel::server {

absl::StatusOr<DeviceMatcher> DeviceMatcher::Parse(const std::string& text,
                                                   const std::string& field) {
  if (text.empty()) return DeviceMatcher(std::nullopt);
  absl::StatusOr<selector::Selector> parsed = selector::Selector::Parse(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", parsed.status().message()));
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

selector::Context DeviceContext(const Device& device,
                                const std::vector<Device>& node_devices) {
  selector::Context context;
  context.device = device.traits;
  context.target_devices.default_device = device.index;
  for (const Device& d : node_devices) {
    context.target_devices.devices[d.index] = d.traits;
  }
  return context;
}

}  // namespace ctxsel::server
