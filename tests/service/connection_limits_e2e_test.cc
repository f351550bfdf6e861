// The real ctxsel-server under connection floods on loopback: idle TCP
// connections beyond its file-descriptor limit must not stop it from
// accepting (gRPC 1.51's own listener gave up after one EMFILE), and
// connections with no call are closed after --max_connection_idle.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

// Plain TCP connections to 127.0.0.1:port that never send a byte; closed
// when destroyed.
class IdleConnections {
 public:
  IdleConnections(int port, int count) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < count; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (fd < 0) break;
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
      fds_.push_back(fd);
    }
    // Wait (bounded) for the handshakes, so the server has them queued.
    for (int fd : fds_) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 2000);
    }
  }
  ~IdleConnections() { CloseAll(); }

  void CloseAll() {
    for (int fd : fds_) close(fd);
    fds_.clear();
  }
  const std::vector<int>& fds() const { return fds_; }

 private:
  std::vector<int> fds_;
};

// True once the server has closed `fd` (EOF or reset), within `timeout`.
bool ClosedByServer(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      return true;
    }
  }
  return false;
}

// A new connection answers Ping within `timeout` (retried, since the
// server notices closed connections asynchronously).
absl::Status PingFromNewClient(const std::string& address,
                               std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  absl::Status last = absl::DeadlineExceededError("no attempt");
  while (std::chrono::steady_clock::now() < deadline) {
    // Its own subchannel pool: gRPC would otherwise reuse the connection
    // of any other channel to the same address in this process.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    client::CtxselClient client(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                  args),
        std::chrono::milliseconds(1000));
    absl::StatusOr<std::string> pong = client.Ping();
    if (pong.ok()) return absl::OkStatus();
    last = pong.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return last;
}

constexpr int kOpenFileLimit = 256;  // soft and hard: the server cannot raise
constexpr int kFloodConnections = 2 * kOpenFileLimit;

TEST(ConnectionLimitsE2E, ServerAcceptsAgainAfterAnFdFlood) {
  auto server =
      ServerProcess::Start({"--fd_headroom=32"}, /*port=*/0, kOpenFileLimit);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  // A client connected before the flood, as agents and launchers are.
  auto connected = client::CtxselClient::Connect(address);
  ASSERT_TRUE(connected->Ping().ok());

  IdleConnections flood((*server)->port(), kFloodConnections);
  ASSERT_EQ(flood.fds().size(), kFloodConnections);
  // More connections than descriptors: wait (bounded) until the server ran
  // short, which it logs ("listener: refused ..."; gRPC's own listener logs
  // "Too many open files").
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline &&
         !absl::StrContains((*server)->Log(), "listener: refused") &&
         !absl::StrContains((*server)->Log(), "Too many open files")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The connection made before keeps working meanwhile.
  EXPECT_TRUE(connected->Ping().ok());
  flood.CloseAll();

  EXPECT_TRUE(PingFromNewClient(address, std::chrono::seconds(15)).ok())
      << (*server)->Log();
  EXPECT_THAT((*server)->Log(), HasSubstr("listener: refused"));
  EXPECT_TRUE((*server)->process().Running());
}

TEST(ConnectionLimitsE2E, IdleConnectionsAreClosed) {
  auto server = ServerProcess::Start({"--max_connection_idle=500ms"});
  ASSERT_TRUE(server.ok()) << server.status();
  IdleConnections idle((*server)->port(), 20);
  ASSERT_EQ(idle.fds().size(), 20u);
  for (int fd : idle.fds()) {
    EXPECT_TRUE(ClosedByServer(fd, std::chrono::seconds(10))) << "fd " << fd;
  }
  EXPECT_TRUE(
      PingFromNewClient((*server)->address(), std::chrono::seconds(5)).ok());
}

// The HTTP/2 SETTINGS the server sends first on a new connection, as
// (identifier, value) pairs; empty if none arrive within 5 s.
std::vector<std::pair<int, uint32_t>> ServerSettings(int port) {
  IdleConnections connection(port, 1);
  if (connection.fds().empty()) return {};
  const int fd = connection.fds()[0];
  // The client preface and an empty SETTINGS frame.
  const std::string preface = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                              std::string("\0\0\0\x04\0\0\0\0\0", 9);
  if (send(fd, preface.data(), preface.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(preface.size())) {
    return {};
  }
  std::string received;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    // Frame header: 24-bit length, type, flags, stream id.
    if (received.size() >= 9) {
      const uint8_t* h = reinterpret_cast<const uint8_t*>(received.data());
      const size_t length = (h[0] << 16) | (h[1] << 8) | h[2];
      if (h[3] == 0x04 && (h[4] & 0x01) == 0 && received.size() >= 9 + length) {
        std::vector<std::pair<int, uint32_t>> settings;
        for (size_t i = 9; i + 6 <= 9 + length; i += 6) {
          settings.emplace_back((h[i] << 8) | h[i + 1],
                                (uint32_t{h[i + 2]} << 24) |
                                    (uint32_t{h[i + 3]} << 16) |
                                    (uint32_t{h[i + 4]} << 8) | h[i + 5]);
        }
        return settings;
      }
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return {};
    received.append(buffer, n);
  }
  return {};
}

// Rapid-reset and header floods: the server advertises a cap on concurrent
// streams and on the header list size per connection.
TEST(ConnectionLimitsE2E, ServerAdvertisesStreamAndHeaderLimits) {
  auto server = ServerProcess::Start(
      {"--max_concurrent_streams=77", "--max_header_list_bytes=12345"});
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kMaxConcurrentStreams = 0x3;
  constexpr int kMaxHeaderListSize = 0x6;
  EXPECT_THAT(ServerSettings((*server)->port()),
              ::testing::IsSupersetOf(
                  {std::make_pair(kMaxConcurrentStreams, uint32_t{77}),
                   std::make_pair(kMaxHeaderListSize, uint32_t{12345})}));

  // The defaults.
  auto defaults = ServerProcess::Start();
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_THAT(ServerSettings((*defaults)->port()),
              ::testing::IsSupersetOf(
                  {std::make_pair(kMaxConcurrentStreams, uint32_t{100}),
                   std::make_pair(kMaxHeaderListSize, uint32_t{8192})}));
}

}  // namespace
}  // namespace ctxsel::testing
