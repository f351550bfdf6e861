#include "server/placement/placer_test_util.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "selector/selector.h"

namespace ctxsel::server::placement::testing {

Device MakeDevice(const std::string& node, int32_t index, Kind kind,
                  double utilisation) {
  Device d;
  d.node = node;
  d.index = index;
  d.id = absl::StrCat(node, "/", index < 0 ? "host" : absl::StrCat(index));
  d.properties.utilisation = utilisation;
  switch (kind) {
    case Kind::kH100:
      d.traits = {{"gpu", "nohost"}, {"nvptx", "sm_90"}, {}, {"nvidia"}, {}};
      d.sycl_architecture = "nvidia_gpu_sm_90";
      break;
    case Kind::kMi250:
      d.traits = {{"gpu", "nohost"}, {"amdgcn"}, {"gfx90a"}, {"amd"}, {}};
      d.sycl_architecture = "amd_gpu_gfx90a";
      break;
    case Kind::kXeon:
      d.traits = {{"cpu", "host"}, {"x86_64"}, {"avx512f"}, {"intel"}, {}};
      d.sycl_architecture = "x86_64";
      break;
  }
  return d;
}

Variant MakeVariant(const std::string& kernel, const std::string& name,
                    const std::string& selector, int64_t order) {
  absl::StatusOr<selector::Selector> parsed =
      selector::Selector::Parse(selector);
  if (!parsed.ok()) {
    std::cerr << "bad test selector " << selector << ": " << parsed.status();
    std::abort();
  }
  return Variant{kernel, name, selector, *parsed, order, /*revision=*/0, {}};
}

std::vector<Variant> SaxpyVariants() {
  return {
      MakeVariant("saxpy", "saxpy_cuda", "device={kind(gpu), arch(nvptx)}", 0),
      MakeVariant("saxpy", "saxpy_hip",
                  "device={kind(gpu), arch(amdgcn), isa(gfx90a)}", 1),
      MakeVariant("saxpy", "saxpy_avx", "device={kind(cpu), isa(avx512f)}", 2),
  };
}

Job SaxpyJob() {
  Job job;
  job.kernel = "saxpy";
  return job;
}

std::string Pick(const Placer& placer, const Job& job) {
  absl::StatusOr<Placement> p = placer.Select(job);
  if (!p.ok()) return std::string(p.status().ToString());
  return p->choice.base() ? "base" : p->choice.variant->name;
}

std::string DeviceOf(const Placer& placer, const Job& job) {
  absl::StatusOr<Placement> p = placer.Select(job);
  return p.ok() ? p->choice.device.id : std::string(p.status().ToString());
}

}  // namespace ctxsel::server::placement::testing
