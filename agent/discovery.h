// Discovery: all of a node's devices, from every enabled backend.
//
// MakeBackends() builds the backends named in the options (each independent:
// one whose hardware is absent simply finds nothing); Discovery::Run() asks
// them all, in order, and gives the devices their node, ids and device
// numbers. A backend that fails keeps its previous devices and its error is
// returned, so one flaky source does not make devices flap.
//
//   DiscoveryOptions options;
//   options.devices_file = "node7.json";
//   CTXSEL_ASSIGN_OR_RETURN(auto backends, MakeBackends(options));
//   Discovery discovery("node7", std::move(backends));
//   Discovery::Result found = discovery.Run();
#ifndef CTXSEL_AGENT_DISCOVERY_H_
#define CTXSEL_AGENT_DISCOVERY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/backend.h"
#include "agent/nvml_backend.h"
#include "devices/device_info.h"

namespace ctxsel::agent {

struct DiscoveryOptions {
  // Hardware backends to run, in this order: any of "cpu", "nvml", "kfd",
  // "drm". The "file" backend is added after them when devices_file is set.
  std::vector<std::string> backends = {"cpu", "nvml", "kfd", "drm"};
  std::string sysfs_root = "/";
  std::string proc_stat = "/proc/stat";
  std::string proc_cpuinfo = "/proc/cpuinfo";  // the kernel's CPU flags
  std::string nvml_library = kNvmlLibrary;
  absl::Duration xid_hold = NvmlOptions().xid_hold;  // see NvmlOptions
  std::string devices_file;                          // empty: none
};

// The backends the options name; InvalidArgumentError for an unknown name.
absl::StatusOr<std::vector<std::unique_ptr<DiscoveryBackend>>> MakeBackends(
    const DiscoveryOptions& options);

class Discovery {
 public:
  Discovery(std::string node,
            std::vector<std::unique_ptr<DiscoveryBackend>> backends);

  struct Result {
    std::vector<DeviceInfo> devices;   // with node, ids and device numbers
    std::vector<absl::Status> errors;  // one per failing backend
  };

  // Asks every backend. Not thread-safe.
  Result Run();

  const std::string& node() const { return node_; }

 private:
  std::string node_;
  std::vector<std::unique_ptr<DiscoveryBackend>> backends_;
  std::vector<std::vector<DeviceInfo>> last_good_;  // per backend
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_DISCOVERY_H_
