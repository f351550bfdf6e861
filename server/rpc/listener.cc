#include "server/rpc/listener.h"

#include <fcntl.h>
#include <grpcpp/server_posix.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/host_port.h"
#include "base/status_macros.h"
#include "server/model/log_text.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

absl::StatusOr<HostPort> SplitAddress(const std::string& address) {
  absl::StatusOr<HostPort> split = ParseHostPort(address);
  if (!split.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address '", LogSafe(address), "': ", split.status().message()));
  }
  return split;
}

int BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return 0;
  }
  if (bound.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

// Binds and listens on the first address of `addresses` that works.
absl::StatusOr<int> BindFirst(const addrinfo* addresses, int backlog) {
  std::string last_error = "no address";
  for (const addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    const int on = 1;
    const int off = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    // "[::]" serves IPv4 too, as gRPC's own listener does.
    if (a->ai_family == AF_INET6) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    }
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, backlog) == 0) {
      return fd;
    }
    last_error = std::strerror(errno);
    close(fd);
  }
  return absl::UnavailableError(last_error);
}

// The soft RLIMIT_NOFILE: descriptors are numbered from 0 below it.
int OpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 ||
      limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (1 << 30)) {
    return 1 << 30;
  }
  return static_cast<int>(limit.rlim_cur);
}

bool OutOfDescriptors(int error) {
  return error == EMFILE || error == ENFILE || error == ENOBUFS ||
         error == ENOMEM;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Listener>> Listener::Bind(
    const std::string& address, const ListenerOptions& options) {
  CTXSEL_ASSIGN_OR_RETURN(HostPort split, SplitAddress(address));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int resolved =
      getaddrinfo(split.host.empty() ? nullptr : split.host.c_str(),
                  split.port.c_str(), &hints, &addresses);
  if (resolved != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address '", LogSafe(address), "': ", gai_strerror(resolved)));
  }
  absl::StatusOr<int> fd = BindFirst(addresses, options.backlog);
  freeaddrinfo(addresses);
  if (!fd.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", LogSafe(address), ": ", fd.status().message()));
  }
  return std::unique_ptr<Listener>(new Listener(*fd, BoundPort(*fd), options));
}

Listener::Listener(int socket_fd, int port, const ListenerOptions& options)
    : socket_fd_(socket_fd), port_(port), options_(options) {
  if (pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    stop_pipe_[0] = stop_pipe_[1] = -1;
  }
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Listener::~Listener() {
  Stop();
  for (int fd : {socket_fd_, stop_pipe_[0], stop_pipe_[1], spare_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void Listener::Start(grpc::Server* server) {
  thread_ = std::thread([this, server] { Run(server); });
}

void Listener::Stop() {
  if (!thread_.joinable()) return;
  const char byte = 0;
  if (write(stop_pipe_[1], &byte, 1) < 0) {
    // The pipe is only ever written once; it cannot be full.
  }
  thread_.join();
}

void Listener::Run(grpc::Server* server) {
  const int fd_limit = OpenFileLimit();
  while (true) {
    pollfd fds[2] = {{socket_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("listener: poll: {}", std::strerror(errno));
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (fds[1].revents != 0) return;
    AcceptAll(server, fd_limit);
  }
}

void Listener::AcceptAll(grpc::Server* server, int fd_limit) {
  while (true) {
    const int fd =
        accept4(socket_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      // Descriptors are allocated lowest first: when this one is numbered
      // N, every one below N is open.
      if (fd >= fd_limit - options_.fd_headroom) {
        close(fd);
        Refuse("too few file descriptors left");
        continue;
      }
      const int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      grpc::AddInsecureChannelFromFd(server, fd);
      continue;
    }
    const int error = errno;
    if (error == EAGAIN || error == EWOULDBLOCK) return;
    if (error == EINTR || error == ECONNABORTED || error == EPROTO) continue;
    if (OutOfDescriptors(error)) {
      // Make room for one, so the waiting client is told (by a close)
      // instead of hanging in the backlog.
      if (spare_fd_ >= 0) {
        close(spare_fd_);
        const int waiting = accept4(socket_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (waiting >= 0) close(waiting);
        spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
      }
      Refuse(std::strerror(error));
      if (spare_fd_ < 0) {
        // Someone else took the freed descriptor; wait for connections
        // to close rather than spin.
        absl::SleepFor(absl::Milliseconds(50));
        spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return;
      }
      continue;
    }
    spdlog::error("listener: accept: {}", std::strerror(error));
    absl::SleepFor(absl::Milliseconds(50));
    return;
  }
}

void Listener::Refuse(const char* why) {
  const int64_t refused = ++refused_;
  const int64_t now = absl::GetCurrentTimeNanos();
  if (now - last_log_ns_ < absl::ToInt64Nanoseconds(absl::Seconds(1))) return;
  spdlog::warn("listener: refused {} connection(s): {}",
               refused - refused_logged_, why);
  refused_logged_ = refused;
  last_log_ns_ = now;
}

}  // namespace ctxsel::server
