// host_port.h: the one parser of "host:port" listen addresses, for the
// gRPC listener and the metrics endpoint alike.
//
//   absl::StatusOr<HostPort> a = ParseHostPort("[::1]:7070");  // "::1", "7070"
#ifndef CTXSEL_BASE_HOST_PORT_H_
#define CTXSEL_BASE_HOST_PORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel {

struct HostPort {
  std::string host;  // brackets of "[v6]" removed; empty ("" or "*"): any
  std::string port;  // digits, 0 to 65535; 0 picks a free port
};

// Splits `address` at its last ':'. InvalidArgumentError "want host:port
// with a port from 0 to 65535" otherwise (the caller names the flag and
// the address).
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_HOST_PORT_H_
