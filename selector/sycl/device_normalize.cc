#include "selector/sycl/device_normalize.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "selector/device_traits.h"
#include "selector/job_check.h"
#include "selector/sycl/arch_catalog.h"

namespace ctxsel::sycl {
namespace {

void LowerCase(selector::NameSet& names) {
  selector::NameSet lower;
  for (const std::string& name : names) {
    lower.insert(absl::AsciiStrToLower(name));
  }
  names = std::move(lower);
}

}  // namespace

absl::Status NormalizeDeviceTraits(absl::string_view sycl_architecture,
                                   selector::DeviceTraits& traits) {
  for (const selector::DeviceTraitField& field : selector::kDeviceTraitFields) {
    LowerCase(traits.*field.member);
  }
  if (!sycl_architecture.empty()) {
    absl::StatusOr<selector::DeviceTraits> catalog =
        DeviceTraitsFor(sycl_architecture);
    if (!catalog.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sycl_architecture: ", catalog.status().message()));
    }
    traits.kind.insert(catalog->kind.begin(), catalog->kind.end());
    traits.arch.insert(catalog->arch.begin(), catalog->arch.end());
    traits.isa.insert(catalog->isa.begin(), catalog->isa.end());
    traits.vendor.insert(catalog->vendor.begin(), catalog->vendor.end());
  } else if (traits.kind.empty()) {
    return absl::InvalidArgumentError(
        "traits.kind: empty and no sycl_architecture (a device needs one)");
  }
  std::vector<std::string> kinds(traits.kind.begin(), traits.kind.end());
  std::sort(kinds.begin(), kinds.end());
  for (const std::string& kind : kinds) {
    if (absl::Status s = selector::CheckDeviceKind(kind); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("traits.kind: ", s.message()));
    }
  }
  return absl::OkStatus();
}

std::string RuntimeVendor(const selector::DeviceTraits& traits) {
  if (traits.vendor.empty()) return "";
  return *std::min_element(traits.vendor.begin(), traits.vendor.end());
}

std::vector<std::string> DeviceIds(
    absl::string_view node,
    const std::vector<std::pair<std::string, std::string>>& devices) {
  std::set<std::string> taken;
  for (const auto& [kind, id] : devices) {
    if (!id.empty()) taken.insert(id);
  }
  std::map<std::string, int> next;
  std::vector<std::string> out;
  for (const auto& [kind, id] : devices) {
    if (!id.empty()) {
      out.push_back(id);
      continue;
    }
    int& n = next[kind];
    std::string candidate = absl::StrCat(node, "/", kind, n++);
    while (taken.count(candidate) > 0) {
      candidate = absl::StrCat(node, "/", kind, n++);
    }
    taken.insert(candidate);
    out.push_back(std::move(candidate));
  }
  return out;
}

std::vector<int> VendorIndices(
    const std::vector<std::pair<std::string, int>>& devices) {
  std::map<std::string, std::set<int>> taken;
  for (const auto& [vendor, index] : devices) {
    if (!vendor.empty() && index >= 0) taken[vendor].insert(index);
  }
  std::map<std::string, int> next;
  std::vector<int> out;
  for (const auto& [vendor, index] : devices) {
    if (vendor.empty() || index >= 0) {
      out.push_back(vendor.empty() ? -1 : index);
      continue;
    }
    int& n = next[vendor];
    while (taken[vendor].count(n)) ++n;
    taken[vendor].insert(n);
    out.push_back(n++);
  }
  return out;
}

}  // namespace ctxsel::sycl
