#include "selector/device_variables.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace ctxsel::selector {

bool IsDeviceVariable(absl::string_view name) {
  return absl::StartsWith(name, kDeviceVariablePrefix);
}

void AddDeviceVariables(const DeviceCapacity& capacity, Variables& variables) {
#define CTXSEL_DEVICE_VARIABLE(id, name, field, divisor, doc)           \
  if (capacity.field > 0) {                                             \
    variables[name] = static_cast<int64_t>(capacity.field) / (divisor); \
  }
#include "selector/device_variables.def"
#undef CTXSEL_DEVICE_VARIABLE
}

std::vector<std::string> DeviceVariableNames() {
  return {
#define CTXSEL_DEVICE_VARIABLE(id, name, field, divisor, doc) name,
#include "selector/device_variables.def"
#undef CTXSEL_DEVICE_VARIABLE
  };
}

}  // namespace ctxsel::selector
