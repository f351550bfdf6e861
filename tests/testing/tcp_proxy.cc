#include "tests/testing/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ctxsel::testing {
namespace {

// How often a pump or the acceptor looks at the flags.
constexpr int kPollMs = 20;

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// Waits up to kPollMs for `fd` to be readable.
bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, kPollMs) > 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(
    const std::string& target) {
  int target_port = 0;
  const size_t colon = target.rfind(':');
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(target).substr(colon + 1),
                        &target_port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("proxy target '", target, "' is not HOST:PORT"));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  if (fd < 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return absl::InternalError(
        absl::StrCat("proxy listen: ", std::strerror(error)));
  }
  std::unique_ptr<TcpProxy> proxy(
      new TcpProxy(fd, ntohs(address.sin_port), target_port));
  proxy->acceptor_ = std::thread([p = proxy.get()] { p->Accept(); });
  return proxy;
}

TcpProxy::~TcpProxy() {
  stopping_.store(true);
  acceptor_.join();
  std::vector<std::thread> pumps;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    pumps.swap(pumps_);
  }
  for (std::thread& pump : pumps) pump.join();
  absl::MutexLock lock(&mu_);
  for (int fd : fds_) ::close(fd);
  ::close(listen_fd_);
}

std::string TcpProxy::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void TcpProxy::Accept() {
  while (!stopping_.load()) {
    if (!Readable(listen_fd_)) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in target = Loopback(target_port_);
    if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&target),
                                sizeof(target)) != 0) {
      // As the target itself would: refused.
      if (server >= 0) ::close(server);
      ::close(client);
      continue;
    }
    absl::MutexLock lock(&mu_);
    fds_.push_back(client);
    fds_.push_back(server);
    pumps_.emplace_back([this, client, server] { Pump(client, server); });
    pumps_.emplace_back([this, client, server] { Pump(server, client); });
  }
}

void TcpProxy::Pump(int from, int to) {
  char buffer[16384];
  while (!stopping_.load()) {
    if (partitioned_.load()) {
      // Nothing read: what `from` sends waits in the socket buffers, as
      // behind a link that drops it (TCP retransmits until it heals).
      ::poll(nullptr, 0, kPollMs);
      continue;
    }
    if (!Readable(from)) continue;
    const ssize_t n = ::read(from, buffer, sizeof(buffer));
    if (n <= 0) break;
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t w = ::send(to, buffer + sent, n - sent, MSG_NOSIGNAL);
      if (w <= 0) {
        ::shutdown(from, SHUT_RDWR);
        return;
      }
      sent += w;
    }
  }
  // One side closed: close the other's direction too, as TCP would.
  ::shutdown(to, SHUT_WR);
  ::shutdown(from, SHUT_RD);
}

}  // namespace ctxsel::testing
