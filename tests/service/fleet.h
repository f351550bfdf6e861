// fleet.h: simulated nodes for the service e2e tests, reported through the
// real client library (what ctxsel-agent sends).
//
//   v1::Node node = GpuNode("gpu1", "nvidia", "nvptx", "nvidia_gpu_sm_90", 2);
//   ASSERT_TRUE(client.ReportNode(node).ok());
#ifndef CTXSEL_TESTS_SERVICE_FLEET_H_
#define CTXSEL_TESTS_SERVICE_FLEET_H_

#include <string>

#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::testing {

// A node with a host CPU (index -1, x86_64) and `gpus` GPUs of one kind.
v1::Node GpuNode(const std::string& id, const std::string& vendor,
                 const std::string& arch, const std::string& sycl_architecture,
                 int gpus);

// A node with only its host CPU.
v1::Node CpuNode(const std::string& id);

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_SERVICE_FLEET_H_
