// names.h: the one rule for names that clients choose (kernels, variants,
// nodes, devices): non-empty, at most 256 bytes, no control characters, no
// leading or trailing space.
//
//   absl::Status s = ValidateName(request.kernel(), "kernel");
//   // InvalidArgumentError "kernel: empty"
#ifndef CTXSEL_SERVER_MODEL_NAMES_H_
#define CTXSEL_SERVER_MODEL_NAMES_H_

#include <string>

#include "absl/status/status.h"

namespace ctxsel::server {

inline constexpr size_t kMaxNameBytes = 256;

// OK, or InvalidArgumentError whose message starts with `field`.
absl::Status ValidateName(const std::string& name, const std::string& field);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_NAMES_H_
