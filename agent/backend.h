// DiscoveryBackend: one independent source of devices on a node.
//
// Each backend (CPU, NVML, KFD, DRM, devices file) answers "which devices do
// you see right now?". A backend whose hardware or driver is absent returns an
// empty list, not an error; errors are for a source that exists but cannot be
// read (a malformed devices file, an NVML call that fails).
//
//   std::unique_ptr<DiscoveryBackend> amd = MakeKfdBackend(Sysfs("/"));
//   absl::StatusOr<std::vector<DeviceInfo>> gpus = amd->Discover();
#ifndef CTXSEL_AGENT_BACKEND_H_
#define CTXSEL_AGENT_BACKEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/device_info.h"

namespace ctxsel::agent {

class DiscoveryBackend {
 public:
  virtual ~DiscoveryBackend() = default;

  // Short name used in flags and logs: "cpu", "nvml", "kfd", "drm", "file".
  virtual std::string name() const = 0;

  // The devices visible now, with current utilisation, without ids (the
  // caller assigns them). Called once per heartbeat, so it should be cheap.
  virtual absl::StatusOr<std::vector<DeviceInfo>> Discover() = 0;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_BACKEND_H_
