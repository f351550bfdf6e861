// The TLS listener never dies quietly (docs/security.md, "TLS and descriptors"):
// with the server's descriptor limit at 256, an attacker opens idle
// connections past it — gRPC 1.51's own TLS listener then stops accepting
// for good — and leaves. The server's self-probe notices that new
// connections are not accepted and the server exits with status 3 (the
// unit's Restart=on-failure restarts it), within a few probe intervals;
// meanwhile its systemd watchdog pings (a fake $NOTIFY_SOCKET here) stop.
// Real server, real TLS clients, loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "client/ctxsel_client.h"
#include "gtest/gtest.h"
#include "tests/security/tls_fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A fake service manager's notify socket (abstract, so no path limit): the
// datagrams it receives, with when.
class FakeNotifySocket {
 public:
  FakeNotifySocket()
      : name_("@ctxsel-notify-test-" + std::to_string(getpid())) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, name_.data(), name_.size());
    address.sun_path[0] = '\0';
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&address),
                  offsetof(sockaddr_un, sun_path) + name_.size()) == 0;
    thread_ = std::thread([this] { Receive(); });
  }
  ~FakeNotifySocket() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  bool bound() const { return bound_; }
  const std::string& name() const { return name_; }
  // Arrival times of the datagrams equal to `state`.
  std::vector<Clock::time_point> Times(const std::string& state) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Clock::time_point> times;
    for (const auto& [text, at] : received_) {
      if (text == state) times.push_back(at);
    }
    return times;
  }

 private:
  void Receive() {
    char buffer[512];
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      received_.emplace_back(std::string(buffer, n), Clock::now());
    }
  }
  const std::string name_;
  int fd_ = -1;
  bool bound_ = false;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::pair<std::string, Clock::time_point>> received_;
  std::thread thread_;
};

// `count` TCP connections to 127.0.0.1:port that never send a byte.
std::vector<int> IdleConnections(int port, int count) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    fds.push_back(fd);
  }
  for (int fd : fds) {
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, 2000);
  }
  return fds;
}

constexpr int kOpenFileLimit = 256;  // soft and hard: the server cannot raise
constexpr auto kProbeInterval = milliseconds(500);
constexpr int kProbeFailures = 3;

TEST(FdExhaustionE2E, TlsServerAcceptsAgainOrExitsForARestart) {
  absl::StatusOr<TlsFleet> fleet = TlsFleet::Make({});
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  absl::StatusOr<std::string> token = fleet->AddToken("launcher", "slurm");
  ASSERT_TRUE(token.ok()) << token.status();
  FakeNotifySocket notify;
  ASSERT_TRUE(notify.bound());
  // The server inherits it, as from systemd (Type=notify).
  setenv("NOTIFY_SOCKET", notify.name().c_str(), 1);
  std::vector<std::string> flags = fleet->ServerFlags();
  flags.push_back("--self_probe_interval=500ms");
  flags.push_back("--self_probe_failures=3");
  auto server = ServerProcess::Start(flags, /*port=*/0, kOpenFileLimit);
  unsetenv("NOTIFY_SOCKET");
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  auto ping_from_new_client = [&] {
    return client::CtxselClient(fleet->Channel(address, fleet->Token("slurm")),
                                milliseconds(1000))
        .Ping();
  };
  ASSERT_TRUE(ping_from_new_client().ok());

  // READY=1 once serving, then WATCHDOG=1 after passing probes.
  const auto healthy_by = Clock::now() + seconds(10);
  while (Clock::now() < healthy_by && notify.Times("WATCHDOG=1").size() < 2) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_EQ(notify.Times("READY=1").size(), 1u);
  ASSERT_GE(notify.Times("WATCHDOG=1").size(), 2u) << (*server)->Log();
  EXPECT_LT(notify.Times("READY=1")[0], notify.Times("WATCHDOG=1")[0]);

  // The attack: idle connections past the descriptor limit, until the
  // server ran out ("Too many open files"), then all closed.
  std::vector<int> flood =
      IdleConnections((*server)->port(), 2 * kOpenFileLimit);
  ASSERT_EQ(flood.size(), 2u * kOpenFileLimit);
  const auto out_by = Clock::now() + seconds(10);
  while (Clock::now() < out_by &&
         !absl::StrContains((*server)->Log(), "Too many open files")) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(absl::StrContains((*server)->Log(), "Too many open files"))
      << (*server)->Log();
  for (int fd : flood) close(fd);
  const auto left = Clock::now();

  // Within 10 s of the attacker leaving, the server accepts new
  // connections again or has exited with status 3 for a restart.
  std::optional<int> exit_code;
  bool accepting = false;
  while (Clock::now() < left + seconds(10)) {
    if (!(*server)->process().Running()) {
      exit_code = (*server)->process().Wait(seconds(1));
      break;
    }
    if (ping_from_new_client().ok()) {
      accepting = true;
      break;
    }
  }
  const auto settled = Clock::now();
  ASSERT_TRUE(accepting || exit_code.has_value())
      << "neither accepting nor exited 10 s after the attacker left\n"
      << (*server)->Log();
  if (exit_code.has_value()) {
    EXPECT_EQ(*exit_code, 3) << (*server)->Log();
    EXPECT_TRUE(absl::StrContains((*server)->Log(),
                                  "self-probe: new connections are not "
                                  "accepted"))
        << (*server)->Log();
    // The watchdog pings stopped once the probe failed: the last came at
    // least (failures - 1) intervals before the exit.
    const std::vector<Clock::time_point> pings = notify.Times("WATCHDOG=1");
    ASSERT_FALSE(pings.empty());
    EXPECT_GE(settled - pings.back(), (kProbeFailures - 1) * kProbeInterval);
  }
  std::printf(
      "attacker left -> %s after %lld ms\n", accepting ? "accepting" : "exited",
      static_cast<long long>(
          std::chrono::duration_cast<milliseconds>(settled - left).count()));
}

}  // namespace
}  // namespace ctxsel::testing
