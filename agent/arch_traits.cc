#include "agent/arch_traits.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::agent {
namespace {

// Traits shared by every architecture whose SYCL name starts with `prefix`;
// the rest of the name (e.g. "sm_90", "gfx90a", "pvc") becomes the `isa`.
struct ArchFamily {
  const char* prefix;
  std::vector<std::string> kinds;
  std::vector<std::string> archs;
  const char* vendor;
  const char* extension;
};

// TODO(agent): derive these from //selector/sycl:arch_catalog once it lands.
const std::vector<ArchFamily>& Families() {
  static const auto* families = new std::vector<ArchFamily>{
      {"nvidia_gpu_", {"gpu", "nohost"}, {"nvptx", "nvptx64"}, "nvidia",
       "cuda"},
      {"amd_gpu_", {"gpu", "nohost"}, {"amdgcn"}, "amd", "rocm"},
      {"intel_gpu_", {"gpu", "nohost"}, {"spir64", "intel_gpu"}, "intel",
       "level_zero"},
  };
  return *families;
}

void AddUnique(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(value);
  }
}

void AddAll(std::vector<std::string>& list,
            const std::vector<std::string>& values) {
  for (const std::string& v : values) AddUnique(list, v);
}

}  // namespace

absl::Status ApplyArchTraits(DeviceInfo& device) {
  const std::string& name = device.sycl_arch;
  if (name == "x86_64") {
    AddAll(device.kinds, {"cpu", "host"});
    AddUnique(device.archs, "x86_64");
    return absl::OkStatus();
  }
  for (const ArchFamily& family : Families()) {
    if (!absl::StartsWith(name, family.prefix) ||
        name.size() == std::string(family.prefix).size()) {
      continue;
    }
    AddAll(device.kinds, family.kinds);
    AddAll(device.archs, family.archs);
    AddUnique(device.isas, name.substr(std::string(family.prefix).size()));
    AddUnique(device.extensions, family.extension);
    if (device.vendor.empty()) device.vendor = family.vendor;
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      absl::StrCat("sycl_arch: unknown SYCL architecture '", name, "'"));
}

}  // namespace ctxsel::agent
