#include "server/main/sd_notify.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

// A unix datagram socket bound to `name` (a path, or "@abstract").
int BoundSocket(const std::string& name) {
  sockaddr_un address{};
  if (name.size() >= sizeof(address.sun_path)) return -1;
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, name.data(), name.size());
  if (name[0] == '@') address.sun_path[0] = '\0';
  if (bind(fd, reinterpret_cast<sockaddr*>(&address),
           offsetof(sockaddr_un, sun_path) + name.size()) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string Receive(int fd) {
  char buffer[256];
  const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  return n > 0 ? std::string(buffer, n) : "";
}

TEST(SdNotifyTest, WithoutNotifySocketSendsNothing) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(SdNotify("READY=1").ok());
}

TEST(SdNotifyTest, SendsToAPathSocket) {
  // /tmp: TEST_TMPDIR may be longer than a socket path may be.
  const std::string path = "/tmp/ctxsel-notify-" + std::to_string(getpid());
  unlink(path.c_str());
  const int fd = BoundSocket(path);
  ASSERT_GE(fd, 0);
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(SdNotify("READY=1").ok());
  EXPECT_TRUE(SdNotify("WATCHDOG=1").ok());
  EXPECT_EQ(Receive(fd), "READY=1");
  EXPECT_EQ(Receive(fd), "WATCHDOG=1");
  close(fd);
  unlink(path.c_str());
  // Nobody listens any more: an error, not a hang.
  EXPECT_FALSE(SdNotify("WATCHDOG=1").ok());
  unsetenv("NOTIFY_SOCKET");
}

TEST(SdNotifyTest, SendsToAnAbstractSocket) {
  const std::string name = "@ctxsel-notify-" + std::to_string(getpid());
  const int fd = BoundSocket(name);
  ASSERT_GE(fd, 0);
  setenv("NOTIFY_SOCKET", name.c_str(), 1);
  EXPECT_TRUE(SdNotify("READY=1").ok());
  EXPECT_EQ(Receive(fd), "READY=1");
  close(fd);
  unsetenv("NOTIFY_SOCKET");
}

TEST(SdNotifyTest, WatchdogIntervalIsForThisProcessOnly) {
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
  EXPECT_FALSE(SdWatchdogInterval().has_value());
  setenv("WATCHDOG_USEC", "30000000", 1);
  EXPECT_EQ(SdWatchdogInterval(), absl::Seconds(30));
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_EQ(SdWatchdogInterval(), absl::Seconds(30));
  setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
  EXPECT_FALSE(SdWatchdogInterval().has_value());
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
}

}  // namespace
}  // namespace ctxsel::server
