// Human-readable listing of a node's devices, for `ctxsel-agent --print`.
//
//   std::cout << DevicesToText("n7", devices);
//   // n7/cpu0 (device -1): Intel(R) Xeon(R) Processor
//   //   sycl_architecture: x86_64   backend: cpu
//   //   kind: cpu host
//   //   ...
#ifndef CTXSEL_AGENT_DEVICE_TEXT_H_
#define CTXSEL_AGENT_DEVICE_TEXT_H_

#include <string>
#include <vector>

#include "devices/device_info.h"

namespace ctxsel::agent {

// One block per device; "<node>: no devices found\n" when there are none.
std::string DevicesToText(const std::string& node,
                          const std::vector<DeviceInfo>& devices);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_DEVICE_TEXT_H_
