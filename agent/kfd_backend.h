// AMD GPUs through the KFD topology in sysfs.
//
// The amdgpu driver publishes one node per agent under
// /sys/class/kfd/kfd/topology/nodes/N; GPU nodes have a non-zero
// `gfx_target_version` (e.g. 90010), which names the architecture
// ("gfx90a" -> SYCL "amd_gpu_gfx90a"). Without the driver the directory is
// absent and the backend finds nothing. A GPU in a compute partition mode
// (amdgpu's current_compute_partition: DPX, QPX, CPX, ...) has one node per
// partition at one PCI device: it is reported as a device for the board
// (its partitions' compute units and memory, the board's UUID and health,
// no ROCm number) followed by its partitions, each with the board as its
// `parent` and ROCm's number for it, as NVML's MIG instances are.
//
//   auto kfd = MakeKfdBackend(Sysfs("/"));
//   absl::StatusOr<std::vector<DeviceInfo>> gpus = kfd->Discover();
#ifndef CTXSEL_AGENT_KFD_BACKEND_H_
#define CTXSEL_AGENT_KFD_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>

#include "agent/backend.h"
#include "agent/sysfs.h"

namespace ctxsel::agent {

std::unique_ptr<DiscoveryBackend> MakeKfdBackend(Sysfs sysfs);

// "gfx90a" for 90010, "gfx1030" for 100300, "gfx942" for 90402: major,
// minor, and the stepping as one hex digit. "" for 0 or a stepping > 15.
std::string GfxName(int64_t gfx_target_version);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_KFD_BACKEND_H_
