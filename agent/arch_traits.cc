#include "agent/arch_traits.h"

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ctxsel::agent {
namespace {

// Traits shared by every architecture whose SYCL name is `prefix` followed
// by a match of `rest`; the rest (e.g. "sm_90", "gfx90a", "pvc") becomes the
// `isa`.
struct ArchFamily {
  const char* prefix;
  std::regex rest;
  std::vector<std::string> kinds;
  std::vector<std::string> archs;
  const char* vendor;
  const char* extension;
};

// TODO(agent): derive these from //selector/sycl:arch_catalog once it lands.
const std::vector<ArchFamily>& Families() {
  static const auto* families = new std::vector<ArchFamily>{
      {"nvidia_gpu_",
       std::regex("sm_[0-9]{2,3}a?"),
       {"gpu", "nohost"},
       {"nvptx", "nvptx64"},
       "nvidia",
       "cuda"},
      {"amd_gpu_",
       std::regex("gfx[0-9]{1,2}[0-9][0-9a-f]"),
       {"gpu", "nohost"},
       {"amdgcn"},
       "amd",
       "rocm"},
      {"intel_gpu_",
       std::regex("[a-z0-9]+(_[a-z0-9]+)*"),
       {"gpu", "nohost"},
       {"spir64", "intel_gpu"},
       "intel",
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
    AddAll(device.kind, {"cpu", "host"});
    AddUnique(device.arch, "x86_64");
    return absl::OkStatus();
  }
  for (const ArchFamily& family : Families()) {
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, family.prefix) ||
        !std::regex_match(rest.begin(), rest.end(), family.rest)) {
      continue;
    }
    AddAll(device.kind, family.kinds);
    AddAll(device.arch, family.archs);
    AddUnique(device.isa, std::string(rest));
    AddUnique(device.extension, family.extension);
    AddUnique(device.vendor, family.vendor);
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      absl::StrCat("sycl_arch: unknown SYCL architecture '", name, "'"));
}

}  // namespace ctxsel::agent
