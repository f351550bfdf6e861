#include "agent/discovery.h"

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/cpu_backend.h"
#include "agent/drm_backend.h"
#include "agent/file_backend.h"
#include "agent/kfd_backend.h"
#include "agent/sysfs.h"

namespace ctxsel::agent {
namespace {

using Factory =
    std::function<std::unique_ptr<DiscoveryBackend>(const DiscoveryOptions&)>;

// The hardware backends by name.
const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const auto* factories =
      new std::vector<std::pair<std::string, Factory>>{
          {"cpu",
           [](const DiscoveryOptions& o) {
             return MakeCpuBackend(o.proc_stat, o.proc_cpuinfo);
           }},
          {"nvml",
           [](const DiscoveryOptions& o) {
             NvmlOptions nvml;
             nvml.library = o.nvml_library;
             nvml.xid_hold = o.xid_hold;
             return MakeNvmlBackend(std::move(nvml));
           }},
          {"kfd",
           [](const DiscoveryOptions& o) {
             return MakeKfdBackend(Sysfs(o.sysfs_root));
           }},
          {"drm",
           [](const DiscoveryOptions& o) {
             return MakeDrmBackend(Sysfs(o.sysfs_root));
           }},
      };
  return *factories;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<DiscoveryBackend>>> MakeBackends(
    const DiscoveryOptions& options) {
  std::vector<std::unique_ptr<DiscoveryBackend>> backends;
  for (const std::string& name : options.backends) {
    const Factory* factory = nullptr;
    std::string known;
    for (const auto& [candidate, make] : Factories()) {
      if (candidate == name) factory = &make;
      absl::StrAppend(&known, known.empty() ? "" : ", ", candidate);
    }
    if (factory == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "backends: unknown backend '", name, "' (known: ", known, ")"));
    }
    backends.push_back((*factory)(options));
  }
  if (!options.devices_file.empty()) {
    backends.push_back(MakeFileBackend(options.devices_file));
  }
  return backends;
}

Discovery::Discovery(std::string node,
                     std::vector<std::unique_ptr<DiscoveryBackend>> backends)
    : node_(std::move(node)),
      backends_(std::move(backends)),
      last_good_(backends_.size()) {}

Discovery::Result Discovery::Run() {
  Result result;
  for (size_t i = 0; i < backends_.size(); ++i) {
    absl::StatusOr<std::vector<DeviceInfo>> found = backends_[i]->Discover();
    if (found.ok()) {
      last_good_[i] = *std::move(found);
    } else {
      result.errors.push_back(found.status());
    }
    result.devices.insert(result.devices.end(), last_good_[i].begin(),
                          last_good_[i].end());
  }
  AssignIds(node_, result.devices);
  return result;
}

}  // namespace ctxsel::agent
