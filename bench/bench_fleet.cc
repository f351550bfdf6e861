#include "bench/bench_fleet.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/synthetic_variants.h"
#include "selector/selector.h"

namespace ctxsel::bench {
namespace {

void Check(const absl::Status& s) {
  if (!s.ok()) {
    std::cerr << "bench setup failed: " << s << "\n";
    std::exit(1);
  }
}

server::Device Make(const std::string& node, int index, int kind, double u) {
  server::Device d;
  d.node = node;
  d.index = index;
  d.id = absl::StrCat(node, "/", index);
  d.properties.utilisation = u;
  if (kind == 0) {
    d.traits = {{"cpu", "host"}, {"x86_64"}, {"avx512f"}, {"intel"}, {}};
  } else if (kind == 1) {
    d.traits = {{"gpu", "nohost"}, {"nvptx", "sm_90"}, {}, {"nvidia"}, {}};
    d.properties.compute_units = 132;
    d.properties.memory_bytes = uint64_t{80} << 30;
  } else if (kind == 3) {  // an H100 of 40 GiB: another class
    d.traits = {{"gpu", "nohost"}, {"nvptx", "sm_90"}, {}, {"nvidia"}, {}};
    d.properties.compute_units = 132;
    d.properties.memory_bytes = uint64_t{40} << 30;
  } else {
    d.traits = {{"gpu", "nohost"}, {"amdgcn"}, {"gfx90a"}, {"amd"}, {}};
  }
  return d;
}

}  // namespace

void LoadFleet(server::placement::Placer& placer, int nodes) {
  std::vector<server::Device> devices;
  devices.reserve(static_cast<size_t>(nodes) * kDevicesPerNode);
  for (int n = 0; n < nodes; ++n) {
    std::string node = absl::StrCat("node", n);
    devices.push_back(Make(node, -1, 0, (n % 97) / 97.0));
    for (int i = 0; i < kDevicesPerNode - 1; ++i) {
      const int kind = n % 2 == 1 ? 2 : n % 4 == 0 ? 1 : 3;
      devices.push_back(Make(node, i, kind, ((n * 7 + i) % 101) / 101.0));
    }
  }
  Check(placer.SetDevices(std::move(devices)));
}

void LoadKernels(server::placement::Placer& placer, int kernels, int variants) {
  for (int k = 0; k < kernels; ++k) {
    std::string kernel = absl::StrCat("k", k);
    std::vector<server::Variant> list;
    for (int v = 0; v < variants; ++v) {
      std::string text = VariantSelector(v);
      absl::StatusOr<selector::Selector> s = selector::Selector::Parse(text);
      Check(s.status());
      list.push_back(server::Variant{
          kernel, absl::StrCat(kernel, "_v", v), text, *s, v, 1, {}});
    }
    Check(placer.SetVariants(kernel, std::move(list)));
  }
}

server::Job BenchJob(int kernel) {
  server::Job job;
  job.kernel = absl::StrCat("k", kernel);
  for (const char* c : {"target", "teams", "parallel", "for"}) {
    job.construct.emplace_back();
    job.construct.back().name = c;
  }
  job.variables["N"] = 4096;
  return job;
}

}  // namespace ctxsel::bench
