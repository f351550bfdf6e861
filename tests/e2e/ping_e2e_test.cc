// The thinnest end-to-end path: real server, real health check, real CLI.
#include <signal.h>
#include <stdlib.h>

#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

// docs/service.md: exit code 3 when the server does not answer
// (kExitUnreachable in client/cli/command.h).
constexpr int kUnreachable = 3;

// Sets $CTXSEL_SERVER, which the CLI children inherit, for one scope.
class ScopedServerEnv {
 public:
  explicit ScopedServerEnv(const std::string& address) {
    setenv("CTXSEL_SERVER", address.c_str(), /*overwrite=*/1);
  }
  ~ScopedServerEnv() { unsetenv("CTXSEL_SERVER"); }
};

// The address of a server that has stopped: nothing answers there.
std::string DeadAddress() {
  auto server = ServerProcess::Start();
  if (!server.ok()) return "";
  const std::string address = (*server)->address();
  (*server)->process().Signal(SIGTERM);
  (*server)->process().Wait(std::chrono::seconds(10));
  return address;
}

TEST(PingE2E, CliPingsRealServer) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();

  CommandResult ping = RunCommand(
      {CliPath(), "--insecure", "--server=" + (*server)->address(), "ping"});
  EXPECT_EQ(ping.exit_code, 0) << ping.stderr_text;
  EXPECT_NE(ping.stdout_text.find("pong"), std::string::npos)
      << ping.stdout_text;

  (*server)->process().Signal(SIGTERM);
  EXPECT_EQ((*server)->process().Wait(std::chrono::seconds(10)), 0)
      << (*server)->Log();
}

TEST(PingE2E, CliFailsUnreachableWhenNoServerAnswers) {
  const std::string address = DeadAddress();
  ASSERT_FALSE(address.empty());

  CommandResult ping =
      RunCommand({CliPath(), "--insecure", "--server=" + address, "ping"});
  EXPECT_EQ(ping.exit_code, kUnreachable);
  EXPECT_NE(ping.stderr_text.find("ping " + address + ": UNAVAILABLE"),
            std::string::npos)
      << ping.stderr_text;
}

TEST(PingE2E, CtxselServerEnvironmentChoosesTheServer) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string dead = DeadAddress();
  ASSERT_FALSE(dead.empty());
  {
    ScopedServerEnv env((*server)->address());
    CommandResult ping = RunCommand({CliPath(), "--insecure", "ping"});
    EXPECT_EQ(ping.exit_code, 0) << ping.stderr_text;
    EXPECT_NE(ping.stdout_text.find("pong from " + (*server)->address()),
              std::string::npos)
        << ping.stdout_text;
  }
  {
    ScopedServerEnv env(dead);
    CommandResult ping = RunCommand({CliPath(), "--insecure", "ping"});
    EXPECT_EQ(ping.exit_code, kUnreachable) << ping.stdout_text;
    // An explicit --server wins over the environment.
    ping = RunCommand(
        {CliPath(), "--insecure", "--server=" + (*server)->address(), "ping"});
    EXPECT_EQ(ping.exit_code, 0) << ping.stderr_text;
  }
}

TEST(PingE2E, SecondServerOnTakenPortFails) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ServerProcess::Start({}, (*first)->port());
  EXPECT_FALSE(second.ok());
}

}  // namespace
}  // namespace ctxsel::testing
