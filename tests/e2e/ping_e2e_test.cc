// The thinnest end-to-end path: real server, real health check, real CLI.
#include <signal.h>

#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

TEST(PingE2E, CliPingsRealServer) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();

  CommandResult ping =
      RunCommand({CliPath(), "--server=" + (*server)->address(), "ping"});
  EXPECT_EQ(ping.exit_code, 0) << ping.stderr_text;
  EXPECT_NE(ping.stdout_text.find("pong"), std::string::npos)
      << ping.stdout_text;

  (*server)->process().Signal(SIGTERM);
  EXPECT_EQ((*server)->process().Wait(std::chrono::seconds(10)), 0)
      << (*server)->Log();
}

TEST(PingE2E, CliFailsWhenNoServerAnswers) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  (*server)->process().Signal(SIGTERM);
  ASSERT_TRUE((*server)->process().Wait(std::chrono::seconds(10)).has_value());

  CommandResult ping = RunCommand({CliPath(), "--server=" + address, "ping"});
  EXPECT_EQ(ping.exit_code, 1);
  EXPECT_NE(ping.stderr_text.find("UNAVAILABLE"), std::string::npos)
      << ping.stderr_text;
}

TEST(PingE2E, SecondServerOnTakenPortFails) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ServerProcess::Start({}, (*first)->port());
  EXPECT_FALSE(second.ok());
}

}  // namespace
}  // namespace ctxsel::testing
