// device_match.h: "does this device match this context selector?" for
// inventory listings (`ctxsel-cli devices ls --match 'device={arch(nvptx)}'`).
//
// The context is DeviceContext() (fleet_context.h): no construct or
// implementation traits and no variables, so a `condition` on a variable
// does not match.
//
//   absl::StatusOr<DeviceMatcher> m =
//   DeviceMatcher::Parse("device={kind(gpu)}"); bool gpu = m->Matches(device,
//   node_devices);
#ifndef CTXSEL_SERVER_DEVICE_MATCH_H_
#define CTXSEL_SERVER_DEVICE_MATCH_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "selector/selector.h"
#include "server/model.h"

namespace ctxsel::server {

class DeviceMatcher {
 public:
  // An empty `text` matches every device. InvalidArgumentError
  // "<field>: L:C: ..." when it does not parse.
  static absl::StatusOr<DeviceMatcher> Parse(const std::string& text,
                                             const std::string& field);

  bool Matches(const Device& device,
               const std::vector<Device>& node_devices) const;

 private:
  explicit DeviceMatcher(std::optional<selector::Selector> selector)
      : selector_(std::move(selector)) {}
  std::optional<selector::Selector> selector_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_DEVICE_MATCH_H_
