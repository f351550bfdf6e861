// Real child processes for tests: start a binary, signal it, wait for it, or
// run it to completion and capture what it printed.
//
//   auto server = Subprocess::Start({RunfilePath("server/ctxsel-server"),
//                                    "--insecure", "--listen=127.0.0.1:0"});
//   CommandResult version = RunCommand({RunfilePath("client/cli/ctxsel-cli"),
//                                       "--version"});
//   EXPECT_EQ(version.exit_code, 0) << version.stderr_text;
#ifndef CTXSEL_TESTS_TESTING_SUBPROCESS_H_
#define CTXSEL_TESTS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ctxsel::testing {

// Absolute path of a file in the test's runfiles, e.g. "server/ctxsel-server".
std::string RunfilePath(const std::string& workspace_relative);

// A fresh empty directory under the test's temporary directory.
std::string MakeTempDir(const std::string& prefix);

// A running child process. The destructor kills (SIGKILL) and reaps it if it
// is still running, so a failing test never leaks processes.
class Subprocess {
 public:
  // Starts argv[0] with the given arguments; stdout and stderr go to the
  // files named (or are inherited when empty).
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv, const std::string& stdout_path = "",
      const std::string& stderr_path = "");

  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int signal_number);
  // SIGSTOP, then waits until every thread of the process has stopped
  // (/proc/PID/task/*/stat): a stop signal is delivered asynchronously, and
  // a process that answers one more call after kill() returned makes a
  // "paused replica" test race. False if not all stopped within `timeout`.
  bool Stop(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Waits for exit; returns the exit code, or 128 + signal if it was killed,
  // or nullopt if it is still running after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  // True while the process has not exited.
  bool Running();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  std::optional<int> exit_code_;
};

struct CommandResult {
  // 128 + signal when killed; 127 when the program could not be executed
  // (as a shell reports it); -1 when no process could be made.
  int exit_code = -1;
  bool timed_out = false;  // still running after the timeout, so killed
  std::string stdout_text;
  std::string stderr_text;
};

// Runs a command to completion (killed after `timeout`) and captures output.
CommandResult RunCommand(
    const std::vector<std::string>& argv,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Starts every command at once (parallel launchers racing for claims), then
// waits for each in turn as RunCommand does, each killed after `timeout`;
// the results in the order of `argvs`.
std::vector<CommandResult> RunCommandsInParallel(
    const std::vector<std::vector<std::string>>& argvs,
    std::chrono::milliseconds timeout);

// The resident set size of process `pid` (VmRSS in /proc/PID/status), in
// bytes; nullopt once it is gone.
std::optional<int64_t> ResidentBytes(pid_t pid);

// Reads a whole file; empty if it does not exist.
std::string ReadFileOrEmpty(const std::string& path);

// The value of NAME in shell assignments as `ctxsel-cli select
// --format=env` and `env` print them (`[export ]NAME='value'` lines); ""
// if absent.
std::string EnvValue(const std::string& text, const std::string& name);

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_SUBPROCESS_H_
