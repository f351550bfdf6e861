#include "tests/service/fleet.h"

namespace ctxsel::testing {
namespace {

void AddHostCpu(v1::Node& node) {
  v1::Device* cpu = node.add_devices();
  cpu->set_index(-1);
  cpu->mutable_traits()->add_kind("cpu");
  cpu->mutable_traits()->add_kind("host");
  cpu->mutable_traits()->add_arch("x86_64");
  cpu->mutable_traits()->add_isa("avx2");
  cpu->mutable_traits()->add_vendor("amd");
  cpu->set_sycl_architecture("x86_64");
  cpu->set_compute_units(64);
}

}  // namespace

v1::Node GpuNode(const std::string& id, const std::string& vendor,
                 const std::string& arch, const std::string& sycl_architecture,
                 int gpus) {
  v1::Node node;
  node.set_id(id);
  node.set_agent_version("fleet-sim");
  AddHostCpu(node);
  for (int i = 0; i < gpus; ++i) {
    v1::Device* gpu = node.add_devices();
    gpu->set_index(i);
    gpu->mutable_traits()->add_kind("gpu");
    gpu->mutable_traits()->add_kind("nohost");
    gpu->mutable_traits()->add_arch(arch);
    gpu->mutable_traits()->add_vendor(vendor);
    gpu->set_sycl_architecture(sycl_architecture);
    gpu->set_memory_bytes(80ull << 30);
    gpu->set_compute_units(132);
  }
  return node;
}

v1::Node CpuNode(const std::string& id) {
  v1::Node node;
  node.set_id(id);
  node.set_agent_version("fleet-sim");
  AddHostCpu(node);
  return node;
}

}  // namespace ctxsel::testing
