#include "base/host_port.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace ctxsel {

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  const absl::string_view digits = colon == absl::string_view::npos
                                       ? absl::string_view()
                                       : address.substr(colon + 1);
  int port = 0;
  // SimpleAtoi alone would take "+80" and " 80", which are not digits.
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &port) || port > 65535) {
    return absl::InvalidArgumentError(
        "want host:port with a port from 0 to 65535");
  }
  HostPort out{std::string(address.substr(0, colon)),
               std::string(address.substr(colon + 1))};
  if (out.host.size() >= 2 && out.host.front() == '[' &&
      out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host == "*") out.host.clear();
  return out;
}

}  // namespace ctxsel
