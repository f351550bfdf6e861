#include "launch/launch_env.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ctxsel::launch {
namespace {

struct Visibility {
  absl::string_view vendor;
  absl::string_view variable;
  bool accepts_uuid;
  absl::string_view order_variable;
  absl::string_view order_value;
};

constexpr Visibility kVisibility[] = {
#define VISIBILITY_ENV(Vendor, Variable, AcceptsUuid, OrderVariable, \
                       OrderValue)                                   \
  {Vendor, Variable, AcceptsUuid, OrderVariable, OrderValue},
#include "launch/visibility_env.def"
};

bool IsHost(const v1::Device& device) {
  const auto& kinds = device.traits().kind();
  return device.index() < 0 ||
         std::find(kinds.begin(), kinds.end(), "host") != kinds.end();
}

// The vendor a runtime numbers the device under (as the server's
// sycl::RuntimeVendor: the smallest vendor trait).
std::string RuntimeVendor(const v1::Device& device) {
  const auto& vendors = device.traits().vendor();
  if (vendors.empty()) return "";
  return *std::min_element(vendors.begin(), vendors.end());
}

}  // namespace

LaunchEnvironment LaunchEnv(const v1::PlacementChoice& choice,
                            absl::string_view kernel, absl::string_view claim) {
  const v1::Device& device = choice.device();
  LaunchEnvironment env = {
      {"CTXSEL_VARIANT",
       choice.base() ? std::string(kernel) : choice.variant()},
      {"CTXSEL_NODE", choice.node()},
      {"CTXSEL_DEVICE", device.id()},
      {"CTXSEL_DEVICE_INDEX", absl::StrCat(device.index())},
  };
  if (!claim.empty()) env.emplace_back("CTXSEL_CLAIM", std::string(claim));
  if (choice.runtime_only_variants_size() > 0) {
    env.emplace_back("CTXSEL_RUNTIME_ONLY_VARIANTS",
                     absl::StrJoin(choice.runtime_only_variants(), ","));
  }
  if (IsHost(device)) {
    env.emplace_back("OMP_NUM_THREADS",
                     absl::StrCat(std::max(device.compute_units(), 1)));
    env.emplace_back("OMP_PLACES", "cores");
    env.emplace_back("OMP_PROC_BIND", "close");
    env.emplace_back("OMP_TARGET_OFFLOAD", "DISABLED");
    return env;
  }
  const std::string vendor = RuntimeVendor(device);
  for (const Visibility& v : kVisibility) {
    if (v.vendor != vendor) continue;
    const bool by_uuid = v.accepts_uuid && !device.uuid().empty();
    if (!by_uuid && !device.has_vendor_index()) break;
    if (!by_uuid && !v.order_variable.empty()) {
      env.emplace_back(v.order_variable, v.order_value);
    }
    env.emplace_back(v.variable, by_uuid ? device.uuid()
                                         : absl::StrCat(device.vendor_index()));
    env.emplace_back("OMP_DEFAULT_DEVICE", "0");
    return env;
  }
  // A vendor without a visibility variable: the node's device number.
  env.emplace_back("OMP_DEFAULT_DEVICE", absl::StrCat(device.index()));
  return env;
}

LaunchEnvironment LaunchEnv(const v1::PlacementChoice& choice,
                            absl::string_view kernel, const v1::Claim& claim) {
  LaunchEnvironment env = LaunchEnv(choice, kernel, claim.id());
  const v1::Device& device = choice.device();
  int64_t percent = claim.compute_percent();
  if (percent == 0 && claim.memory_bytes() > 0 && device.memory_bytes() > 0) {
    percent = static_cast<int64_t>(
        (claim.memory_bytes() * 100 + device.memory_bytes() - 1) /
        device.memory_bytes());
  }
  if (percent > 0 && RuntimeVendor(device) == "nvidia") {
    env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                     absl::StrCat(std::min<int64_t>(percent, 100)));
  }
  return env;
}

std::string ShellQuote(absl::string_view value) {
  return absl::StrCat("'", absl::StrReplaceAll(value, {{"'", "'\\''"}}), "'");
}

std::string ExportLines(const LaunchEnvironment& env) {
  std::string out;
  for (const auto& [name, value] : env) {
    absl::StrAppend(&out, "export ", name, "=", ShellQuote(value), "\n");
  }
  return out;
}

}  // namespace ctxsel::launch
