#include "bench/load/load_fleet.h"

#include "absl/strings/str_cat.h"
#include "bench/synthetic_variants.h"

namespace ctxsel::load {
namespace {

void SetTraits(v1::Device* d, std::initializer_list<const char*> kind,
               std::initializer_list<const char*> arch,
               std::initializer_list<const char*> isa, const char* vendor) {
  for (const char* k : kind) d->mutable_traits()->add_kind(k);
  for (const char* a : arch) d->mutable_traits()->add_arch(a);
  for (const char* i : isa) d->mutable_traits()->add_isa(i);
  d->mutable_traits()->add_vendor(vendor);
}

}  // namespace

v1::Node LoadNode(const std::string& id, int number, int devices_per_node) {
  v1::Node node;
  node.set_id(id);
  node.set_agent_version("ctxsel-load");
  v1::Device* cpu = node.add_devices();
  cpu->set_index(-1);
  cpu->set_id(absl::StrCat(id, "/host"));
  SetTraits(cpu, {"cpu", "host"}, {"x86_64"}, {"avx512f"}, "intel");
  cpu->set_compute_units(64);
  for (int i = 0; i + 1 < devices_per_node; ++i) {
    v1::Device* gpu = node.add_devices();
    gpu->set_index(i);
    gpu->set_id(absl::StrCat(id, "/", i));
    if (number % 2 == 0) {
      SetTraits(gpu, {"gpu", "nohost"}, {"nvptx", "sm_90"}, {}, "nvidia");
    } else {
      SetTraits(gpu, {"gpu", "nohost"}, {"amdgcn"}, {"gfx90a"}, "amd");
    }
    gpu->set_memory_bytes(80ull << 30);
    gpu->set_compute_units(132);
    gpu->set_utilisation(((number * 7 + i) % 101) / 101.0);
  }
  return node;
}

std::string LoadKernelName(int k) { return absl::StrCat("load_k", k); }

v1::RegisterVariantsRequest LoadKernel(int k, int variants) {
  v1::RegisterVariantsRequest request;
  request.set_kernel(LoadKernelName(k));
  request.set_replace(true);
  for (int v = 0; v < variants; ++v) {
    v1::Variant* variant = request.add_variants();
    variant->set_kernel(request.kernel());
    variant->set_name(absl::StrCat(request.kernel(), "_v", v));
    variant->set_selector(bench::VariantSelector(v));
  }
  return request;
}

v1::SelectRequest LoadSelect(int k, int sequence) {
  v1::SelectRequest request;
  v1::Job* job = request.mutable_job();
  job->set_kernel(LoadKernelName(k));
  for (const char* name : {"target", "teams", "parallel", "for"}) {
    job->add_construct()->set_name(name);
  }
  (*job->mutable_variables())["N"] = 1024 * (1 + sequence % 16);
  return request;
}

}  // namespace ctxsel::load
