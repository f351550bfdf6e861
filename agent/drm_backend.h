// Intel GPUs through DRM and PCI ids in sysfs.
//
// Every GPU with a kernel driver appears as /sys/class/drm/cardN, whose
// `device/vendor` and `device/device` are its PCI ids. For Intel (0x8086) the
// device id is looked up in intel_gpu_ids.def to name the SYCL architecture
// ("intel_gpu_pvc"); other vendors are left to their own backends (NVML, KFD).
// Health comes from what the kernel publishes in sysfs: the device's PCIe AER
// counters, i915's captured error state (cardN/error) and a driver's
// devcoredump (i915 or xe); a fatal AER error makes the GPU unhealthy, the
// others degraded.
//
//   auto drm = MakeDrmBackend(Sysfs("/"));
//   absl::StatusOr<std::vector<DeviceInfo>> gpus = drm->Discover();
#ifndef CTXSEL_AGENT_DRM_BACKEND_H_
#define CTXSEL_AGENT_DRM_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/backend.h"
#include "agent/sysfs.h"

namespace ctxsel::agent {

std::unique_ptr<DiscoveryBackend> MakeDrmBackend(Sysfs sysfs);

// The SYCL architecture of the Intel GPU with PCI device id `pci_id`, and its
// product name; empty strings if the id is not in intel_gpu_ids.def.
struct IntelGpuId {
  std::string sycl_architecture;
  std::string product;
};
IntelGpuId LookupIntelGpu(uint32_t pci_id);

// Every PCI device id in intel_gpu_ids.def, in table order.
std::vector<uint32_t> KnownIntelGpuPciIds();

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_DRM_BACKEND_H_
