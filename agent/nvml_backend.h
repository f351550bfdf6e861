// NVIDIA GPUs through NVML, loaded at run time.
//
// The backend dlopen()s the NVML library (normally "libnvidia-ml.so.1", which
// the NVIDIA driver installs), so ctxsel has no build dependency on CUDA and a
// node without the driver simply has no NVIDIA devices. Each GPU's compute
// capability X.Y names its SYCL architecture "nvidia_gpu_sm_XY". A GPU in
// MIG mode is reported with its MIG instances, each a device of its own
// whose `parent` is the GPU. Health: a critical Xid (not one an application
// causes) makes a GPU unhealthy for `xid_hold`; a row-remapping failure
// makes it unhealthy, remapping or retired pages pending a reset or
// volatile uncorrected ECC errors degraded; MIG instances share their GPU's
// health. Every MIG and health call is optional (resolved with dlsym), so
// an older driver still works.
//
//   auto nvml = MakeNvmlBackend("libnvidia-ml.so.1");
//   absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
#ifndef CTXSEL_AGENT_NVML_BACKEND_H_
#define CTXSEL_AGENT_NVML_BACKEND_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/backend.h"

namespace ctxsel::agent {

inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// Loads `library` (a dlopen() name or path) and initialises NVML once; if
// either fails, Discover() finds no devices.
std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(std::string library);

struct NvmlOptions {
  std::string library = kNvmlLibrary;
  // How long a GPU stays unhealthy after its last critical Xid (NVML keeps
  // no Xid history: the agent remembers).
  absl::Duration xid_hold = absl::Minutes(10);
  std::function<absl::Time()> now = [] { return absl::Now(); };
};
std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(NvmlOptions options);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_NVML_BACKEND_H_
