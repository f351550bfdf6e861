#include "server/fleet/device_normalize.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "selector/sycl/arch_catalog.h"
#include "selector/sycl/device_normalize.h"

namespace ctxsel::server {

absl::Status NormalizeDevices(const std::string& node,
                              std::vector<Device>& devices) {
  for (size_t i = 0; i < devices.size(); ++i) {
    Device& device = devices[i];
    if (absl::Status s = sycl::NormalizeDeviceTraits(device.sycl_architecture,
                                                     device.traits);
        !s.ok()) {
      // The catalog refuses an unknown architecture; the rest is the kind.
      const bool unknown_architecture =
          !device.sycl_architecture.empty() &&
          !sycl::DeviceTraitsFor(device.sycl_architecture).ok();
      const std::string field = absl::StrCat("node.devices[", i, "]");
      return WithFieldViolation(
          absl::InvalidArgumentError(absl::StrCat(field, ".", s.message())),
          absl::StrCat(field, unknown_architecture ? ".sycl_architecture"
                                                   : ".traits.kind"),
          s.message());
    }
  }
  std::vector<size_t> order(devices.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return devices[a].index < devices[b].index;
  });
  std::vector<std::pair<std::string, int>> slots;
  std::vector<std::pair<std::string, std::string>> named;
  for (size_t i : order) {
    const Device& d = devices[i];
    named.emplace_back(sycl::IdKind(d.traits.kind), d.id);
    const bool host = d.index < 0 || d.traits.kind.contains("host");
    slots.emplace_back(host ? "" : sycl::RuntimeVendor(d.traits),
                       d.identity.vendor_index);
  }
  const std::vector<int> numbers = sycl::VendorIndices(slots);
  const std::vector<std::string> ids = sycl::DeviceIds(node, named);
  for (size_t k = 0; k < order.size(); ++k) {
    devices[order[k]].identity.vendor_index = numbers[k];
    devices[order[k]].id = ids[k];
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
