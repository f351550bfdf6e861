// listener.h: accepts the server's TCP connections itself and hands each to
// gRPC (grpc::AddInsecureChannelFromFd), instead of gRPC's own listener.
//
// Why: gRPC 1.51's listener stops accepting for good after one accept()
// fails with EMFILE — once the process ran out of descriptors (idle TCP
// connections from anyone are enough), the server never answers again, even
// after every connection closed. This listener survives that and keeps
// descriptors in reserve:
//   - A connection that would leave fewer than `fd_headroom` free
//     descriptors (below the soft RLIMIT_NOFILE) is accepted and closed at
//     once, so the files, epoll and wakeup descriptors gRPC and the store
//     open later still get one, and the client sees a closed connection
//     rather than a hang.
//   - If accept() still fails for lack of descriptors, one spare descriptor
//     held for the purpose is closed, the waiting connection accepted and
//     closed, and the spare reopened; the listener then carries on.
// Refusals are logged at most once per second, with their count.
//
//   absl::StatusOr<std::unique_ptr<Listener>> listener =
//       Listener::Bind("0.0.0.0:7070", ListenerOptions{});
//   ... build and start a grpc::Server with no listening ports ...
//   (*listener)->Start(server.get());
//   ...
//   (*listener)->Stop();  // before server->Shutdown()
#ifndef CTXSEL_SERVER_RPC_LISTENER_H_
#define CTXSEL_SERVER_RPC_LISTENER_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace ctxsel::server {

struct ListenerOptions {
  // Descriptors kept free for everything but new connections.
  int fd_headroom = 64;
  // Passed to listen(2).
  int backlog = 1024;
};

class Listener {
 public:
  // Binds `address` ("host:port", "[v6]:port"; port 0 picks a free one)
  // with SO_REUSEADDR but not SO_REUSEPORT, so a port that is taken is an
  // error. Errors: InvalidArgumentError for an address that does not parse
  // or resolve, UnavailableError when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<Listener>> Bind(
      const std::string& address, const ListenerOptions& options);

  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  // Stops (if running) and closes the socket.
  ~Listener();

  int port() const { return port_; }

  // Starts accepting connections for `server`, which must be started and
  // outlive Stop().
  void Start(grpc::Server* server);
  // Stops accepting; returns when no connection will be handed to the
  // server any more. Idempotent.
  void Stop();

  // Connections accepted and closed at once for lack of descriptors.
  int64_t refused() const { return refused_.load(); }

 private:
  Listener(int socket_fd, int port, const ListenerOptions& options);
  void Run(grpc::Server* server);
  // Accepts until the backlog is empty or `stop_pipe_` fires.
  void AcceptAll(grpc::Server* server, int fd_limit);
  void Refuse(const char* why);

  const int socket_fd_;
  const int port_;
  const ListenerOptions options_;
  int stop_pipe_[2] = {-1, -1};
  int spare_fd_ = -1;
  std::thread thread_;
  std::atomic<int64_t> refused_{0};
  int64_t refused_logged_ = 0;
  int64_t last_log_ns_ = 0;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_LISTENER_H_
