// device_normalize.h: the one rule for what a reported device's traits must
// be, used by the agent (devices files, discovery) and by the server for
// every report, whoever sent it.
//
//   selector::DeviceTraits traits;  // e.g. only {arch: [NVPTX]}
//   absl::Status s = NormalizeDeviceTraits("nvidia_gpu_sm_90", traits);
//   // traits: kind {gpu, nohost}, arch {nvptx, nvptx64, nvidia_gpu_sm_90,
//   // ...}, isa {sm_90, sm_90a}, vendor {nvidia}
//
//   std::vector<int> numbers = VendorIndices({{"", -1}, {"nvidia", -1},
//                                             {"intel", -1}, {"amd", -1}});
//   // {-1, 0, 0, 0}: each vendor's runtime counts its own devices
#ifndef CTXSEL_SELECTOR_SYCL_DEVICE_NORMALIZE_H_
#define CTXSEL_SELECTOR_SYCL_DEVICE_NORMALIZE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::sycl {

// Completes and checks one device's traits: every name lower-cased; when
// `sycl_architecture` is not empty, the catalog's kind, arch (with the SYCL
// names), isa and vendor are added (an unknown architecture is the catalog's
// error, prefixed "sycl_architecture: "); `kind` names must be device kinds
// of traits.def ("traits.kind: 'tpu' is not a device kind ..."); a device
// with neither an architecture nor a kind is an error. Errors are
// InvalidArgumentError; callers prefix the device's field.
absl::Status NormalizeDeviceTraits(absl::string_view sycl_architecture,
                                   selector::DeviceTraits& traits);

// The vendor a runtime numbers a device under: the smallest of its `vendor`
// traits, "" for none.
std::string RuntimeVendor(const selector::DeviceTraits& traits);

// Vendor indices for one node's devices, given in `index` order as (runtime
// vendor, vendor index or -1 when unknown): each unknown one becomes the next
// number of its vendor not given to another device; devices without a vendor
// keep -1.
std::vector<int> VendorIndices(
    const std::vector<std::pair<std::string, int>>& devices);

// The kind a device's id numbers it under: the smallest of its kind traits
// other than host, nohost and any ("cpu" for {host, cpu}); "device" when
// there is none.
template <typename Names>
std::string IdKind(const Names& kinds) {
  std::string out;
  for (const std::string& kind : kinds) {
    if (kind == "host" || kind == "nohost" || kind == "any") continue;
    if (out.empty() || kind < out) out = kind;
  }
  return out.empty() ? "device" : out;
}

// Device ids for one node's devices, given in `index` order as (IdKind, id
// or "" when not reported). The one rule for the agent and the server: each
// empty id becomes "<node>/<kind><n>", n the next number of that kind whose
// id no device has ("n1/cpu0", "n1/gpu0", "n1/gpu1").
std::vector<std::string> DeviceIds(
    absl::string_view node,
    const std::vector<std::pair<std::string, std::string>>& devices);

}  // namespace ctxsel::sycl

#endif  // CTXSEL_SELECTOR_SYCL_DEVICE_NORMALIZE_H_
