// NVIDIA GPUs through NVML, loaded at run time.
//
// The backend dlopen()s the NVML library (normally "libnvidia-ml.so.1", which
// the NVIDIA driver installs), so ctxsel has no build dependency on CUDA and a
// node without the driver simply has no NVIDIA devices. Each GPU's compute
// capability X.Y names its SYCL architecture "nvidia_gpu_sm_XY".
//
//   auto nvml = MakeNvmlBackend("libnvidia-ml.so.1");
//   absl::StatusOr<std::vector<DeviceInfo>> gpus = nvml->Discover();
#ifndef CTXSEL_AGENT_NVML_BACKEND_H_
#define CTXSEL_AGENT_NVML_BACKEND_H_

#include <memory>
#include <string>

#include "agent/backend.h"

namespace ctxsel::agent {

inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// Loads `library` (a dlopen() name or path) and initialises NVML once; if
// either fails, Discover() finds no devices.
std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(std::string library);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_NVML_BACKEND_H_
