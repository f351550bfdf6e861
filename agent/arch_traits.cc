#include "agent/arch_traits.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "selector/sycl/arch_catalog.h"
#include "selector/sycl/device_normalize.h"

namespace ctxsel::agent {
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
  AddAll(device.kind, traits->kind);
  AddAll(device.arch, traits->arch);
  AddAll(device.isa, traits->isa);
  AddAll(device.vendor, traits->vendor);
  AddAll(device.extension, traits->extension);
  return absl::OkStatus();
}

absl::Status NormalizeDeviceInfo(DeviceInfo& device) {
  std::vector<std::string>* lists[] = {&device.kind, &device.arch, &device.isa,
                                       &device.vendor, &device.extension};
  selector::DeviceTraits traits;
  selector::NameSet* sets[] = {&traits.kind, &traits.arch, &traits.isa,
                               &traits.vendor, &traits.extension};
  for (int i = 0; i < 5; ++i)
    sets[i]->insert(lists[i]->begin(), lists[i]->end());
  CTXSEL_RETURN_IF_ERROR(
      sycl::NormalizeDeviceTraits(device.sycl_architecture, traits));
  for (int i = 0; i < 5; ++i) {
    std::vector<std::string> kept;
    for (const std::string& name : *lists[i]) {
      AddUnique(kept, absl::AsciiStrToLower(name));
    }
    *lists[i] = std::move(kept);
    AddAll(*lists[i], *sets[i]);
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

}  // namespace ctxsel::agent
