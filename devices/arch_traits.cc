#include "devices/arch_traits.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "selector/sycl/arch_catalog.h"
#include "selector/sycl/device_normalize.h"

namespace ctxsel {
namespace {

void AddUnique(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(value);
  }
}

// Appends a catalog name set in sorted order, so reports are deterministic.
void AddAll(std::vector<std::string>& list, const selector::NameSet& values) {
  std::vector<std::string> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& v : sorted) AddUnique(list, v);
}

}  // namespace

absl::Status ApplyArchTraits(DeviceInfo& device) {
  absl::StatusOr<selector::DeviceTraits> traits =
      sycl::DeviceTraitsFor(device.sycl_architecture);
  if (!traits.ok()) {
    return absl::NotFoundError(
        absl::StrCat("sycl_architecture: ", traits.status().message()));
  }
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  AddAll(device.member, traits->member);
#include "selector/device_traits.def"

  return absl::OkStatus();
}

absl::Status NormalizeDeviceInfo(DeviceInfo& device) {
  // One (list, set) pair per trait of device_traits.def.
  selector::DeviceTraits traits;
  const std::pair<std::vector<std::string>*, selector::NameSet*> pairs[] = {
#define DEVICE_TRAIT(member, Id, Name, Weight) {&device.member, &traits.member},
#include "selector/device_traits.def"
  };
  for (const auto& [list, set] : pairs) set->insert(list->begin(), list->end());
  CTXSEL_RETURN_IF_ERROR(
      sycl::NormalizeDeviceTraits(device.sycl_architecture, traits));
  for (const auto& [list, set] : pairs) {
    std::vector<std::string> kept;
    for (const std::string& name : *list) {
      AddUnique(kept, absl::AsciiStrToLower(name));
    }
    *list = std::move(kept);
    AddAll(*list, *set);
  }
  return absl::OkStatus();
}

void ApplyUnknownGpuTraits(DeviceInfo& device, const std::string& vendor,
                           const std::string& isa) {
  device.sycl_architecture.clear();
  AddUnique(device.kind, "gpu");
  AddUnique(device.kind, "nohost");
  AddUnique(device.vendor, vendor);
  if (!isa.empty()) AddUnique(device.isa, isa);
}

}  // namespace ctxsel
