// device_variables.h: the implementation-defined variables through which a
// `condition()` reads the candidate device's capacity, e.g.
//   user={condition(ctxsel_device_memory_gib >= 60)}
// so that one kernel registers a big-batch variant for full GPUs and a small
// one for a 10 GB partition. Names start with kDeviceVariablePrefix and are
// listed in device_variables.def; a job never gives them (the implementation
// does, per candidate device), and conditions reading them are evaluated per
// device class instead of once per request (ConditionVerdicts).
//
//   Variables vars = job.variables;
//   AddDeviceVariables({.memory_bytes = 80ull << 30}, vars);
//   // vars["ctxsel_device_memory_gib"] == 80
#ifndef CTXSEL_SELECTOR_DEVICE_VARIABLES_H_
#define CTXSEL_SELECTOR_DEVICE_VARIABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::selector {

// Every device variable's name starts with it; a job variable may not.
inline constexpr absl::string_view kDeviceVariablePrefix = "ctxsel_device_";

// What the device variables are computed from; 0: not reported.
struct DeviceCapacity {
  uint64_t memory_bytes = 0;
  int32_t compute_units = 0;
};

// True for a name with kDeviceVariablePrefix (known or not).
bool IsDeviceVariable(absl::string_view name);

// Sets the device variables `capacity` defines in `variables` (see
// device_variables.def; a capacity of 0 defines none).
void AddDeviceVariables(const DeviceCapacity& capacity, Variables& variables);

// The names of device_variables.def, in its order, for docs and help.
std::vector<std::string> DeviceVariableNames();

}  // namespace ctxsel::selector

#endif  // CTXSEL_SELECTOR_DEVICE_VARIABLES_H_
