// ctxsel-cli --timeout against a real server that accepts connections but
// never answers (stopped with SIGSTOP): every service command gives up after
// its deadline with exit 3 and a message naming the deadline.
#include <signal.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

// Resumes a stopped server even when an assertion ends the test early, so
// the fixture's SIGKILL in ~Subprocess is not the only way out.
class Resume {
 public:
  explicit Resume(Subprocess& process) : process_(process) {}
  ~Resume() { process_.Signal(SIGCONT); }

 private:
  Subprocess& process_;
};

TEST(CliTimeoutE2E, StoppedServerGivesExit3NamingTheDeadline) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  ASSERT_EQ(RunCommand({CliPath(), "--insecure", "--server=" + address, "ping"})
                .exit_code,
            0);

  ASSERT_TRUE((*server)->process().Stop()) << "the server did not stop";
  {
    Resume resume((*server)->process());
    const std::vector<std::vector<std::string>> commands = {
        {"ping"},
        {"variants", "ls"},
        {"variants", "get", "saxpy", "saxpy_nv"},
        {"nodes", "ls"},
        {"devices", "ls", "--device_filter=device={kind(gpu)}"},
        {"select", "--kernel=saxpy"},
        {"explain", "--kernel=saxpy"},
        {"watch"},
    };
    for (std::vector<std::string> args : commands) {
      const std::string name = args[0];
      args.insert(args.begin(), {CliPath(), "--insecure", "--server=" + address,
                                 "--timeout=300ms"});
      // The bound: RunCommand kills the CLI (exit 137, not 3) after 15 s.
      CommandResult result = RunCommand(args, std::chrono::seconds(15));
      EXPECT_EQ(result.exit_code, 3) << name << ": " << result.stderr_text;
      EXPECT_THAT(result.stderr_text, HasSubstr("DEADLINE_EXCEEDED")) << name;
      EXPECT_THAT(result.stderr_text, HasSubstr("no answer within 300ms"))
          << name;
      EXPECT_THAT(result.stderr_text, HasSubstr("[--timeout=300ms]")) << name;
    }
  }

  // Resumed, the same server answers again and stops cleanly.
  CommandResult ping = RunCommand(
      {CliPath(), "--insecure", "--server=" + address, "--timeout=5s", "ping"});
  EXPECT_EQ(ping.exit_code, 0) << ping.stderr_text;
  (*server)->process().Signal(SIGTERM);
  EXPECT_EQ((*server)->process().Wait(std::chrono::seconds(10)), 0);
}

TEST(CliTimeoutE2E, NonPositiveTimeoutIsBadInput) {
  for (const std::string flag :
       {"--timeout=0s", "--timeout=-1s", "--timeout=inf"}) {
    CommandResult result =
        RunCommand({CliPath(), "--server=127.0.0.1:1", flag, "ping"});
    EXPECT_EQ(result.exit_code, 2) << flag;
    EXPECT_THAT(result.stderr_text,
                HasSubstr("--timeout: must be a positive, finite duration"))
        << flag;
  }
}

}  // namespace
}  // namespace ctxsel::testing
