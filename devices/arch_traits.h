// From a SYCL architecture name to OpenMP device traits.
//
// Every discovery backend only has to name a device's SYCL architecture
// ("nvidia_gpu_sm_90", "amd_gpu_gfx90a", "intel_gpu_pvc", "x86_64"); the
// `kind`, `arch`, `isa` and `vendor` trait properties then come from the SYCL
// architecture catalog (//selector/sycl:arch_catalog), the same table the
// server and the CLI read, so a device is described with one vocabulary
// whichever backend found it.
//
//   DeviceInfo d;
//   d.sycl_architecture = "amd_gpu_gfx90a";
//   absl::Status s = ApplyArchTraits(d);
//   // d.kind == {"gpu", "nohost"}, d.arch == {"amdgcn"},
//   // d.isa == {"gfx90a"}, d.vendor == {"amd"}
#ifndef CTXSEL_DEVICES_ARCH_TRAITS_H_
#define CTXSEL_DEVICES_ARCH_TRAITS_H_

#include <string>

#include "absl/status/status.h"
#include "devices/device_info.h"

namespace ctxsel {

// Adds the traits the catalog gives for `device.sycl_architecture` (canonical
// name or alias) to `device`; lists keep their entries and gain no duplicates,
// and catalog sets are added in sorted order. Returns the catalog's
// NotFoundError (naming the architecture and the nearest known names) for an
// unknown name; `device` is then unchanged.
absl::Status ApplyArchTraits(DeviceInfo& device);

// The shared report rule (sycl::NormalizeDeviceTraits) applied to `device`:
// names lower case, catalog traits for its SYCL architecture, kinds from the
// vocabulary, neither architecture nor kind an error. Lists keep their order;
// added names come sorted. InvalidArgumentError names the field.
absl::Status NormalizeDeviceInfo(DeviceInfo& device);

// For a GPU whose architecture the catalog does not know (a newer NVIDIA
// compute capability, an unlisted Intel PCI id): clears `sycl_architecture` and
// adds kind {gpu, nohost}, `vendor` and, if not empty, `isa` ("sm_100").
void ApplyUnknownGpuTraits(DeviceInfo& device, const std::string& vendor,
                           const std::string& isa);

}  // namespace ctxsel

#endif  // CTXSEL_DEVICES_ARCH_TRAITS_H_
