#include "server/main/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::server {

absl::Status SdNotify(absl::string_view state) {
  const char* socket_name = std::getenv("NOTIFY_SOCKET");
  if (socket_name == nullptr || socket_name[0] == '\0') {
    return absl::OkStatus();
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = std::strlen(socket_name);
  if ((socket_name[0] != '/' && socket_name[0] != '@') ||
      length >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(
        "NOTIFY_SOCKET: not a socket path or @abstract name");
  }
  std::memcpy(address.sun_path, socket_name, length);
  if (socket_name[0] == '@') address.sun_path[0] = '\0';  // abstract
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("NOTIFY_SOCKET: socket: ", std::strerror(errno)));
  }
  const ssize_t sent =
      sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
             reinterpret_cast<const sockaddr*>(&address),
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length));
  const int error = errno;
  close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    return absl::UnavailableError(
        absl::StrCat("NOTIFY_SOCKET: send: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

std::optional<absl::Duration> SdWatchdogInterval() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  int64_t microseconds = 0;
  if (usec == nullptr || !absl::SimpleAtoi(usec, &microseconds) ||
      microseconds <= 0) {
    return std::nullopt;
  }
  // Set for the main process only; a child that inherited it is not meant.
  if (const char* pid = std::getenv("WATCHDOG_PID"); pid != nullptr) {
    int64_t watched = 0;
    if (!absl::SimpleAtoi(pid, &watched) || watched != getpid()) {
      return std::nullopt;
    }
  }
  return absl::Microseconds(microseconds);
}

}  // namespace ctxsel::server
