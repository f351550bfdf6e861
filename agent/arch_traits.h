// From a SYCL architecture name to OpenMP device traits.
//
// Every discovery backend only has to name a device's SYCL architecture
// ("nvidia_gpu_sm_90", "amd_gpu_gfx90a", "intel_gpu_pvc", "x86_64"); this
// function derives the `kind`, `arch`, `isa` and `vendor` trait properties
// from that name, so a device is described with one vocabulary whichever
// backend found it.
//
//   DeviceInfo d;
//   d.sycl_arch = "amd_gpu_gfx90a";
//   absl::Status s = ApplyArchTraits(d);
//   // d.kind == {"gpu", "nohost"}, d.arch == {"amdgcn"},
//   // d.isa == {"gfx90a"}, d.vendor == "amd"
#ifndef CTXSEL_AGENT_ARCH_TRAITS_H_
#define CTXSEL_AGENT_ARCH_TRAITS_H_

#include "absl/status/status.h"
#include "agent/device_info.h"

namespace ctxsel::agent {

// Adds the traits implied by `device.sycl_arch` to `device` (lists keep their
// existing entries; duplicates are not added; `vendor` is set only if empty).
// Returns NotFoundError naming the architecture if it is not a known SYCL
// architecture name; `device` is then unchanged.
absl::Status ApplyArchTraits(DeviceInfo& device);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_ARCH_TRAITS_H_
