#include "tests/testing/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ctxsel::testing {
namespace {

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// In the child: points `fd` at `path` (truncated), or leaves it alone.
void RedirectOrInherit(int fd, const std::string& path) {
  if (path.empty()) return;
  int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (file < 0) _exit(127);
  dup2(file, fd);
  close(file);
}

}  // namespace

std::string RunfilePath(const std::string& workspace_relative) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/",
                      workspace ? workspace : "ctxsel", "/",
                      workspace_relative);
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(tmp ? tmp : "/tmp", "/", prefix, "XXXXXX");
  char* made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv, const std::string& stdout_path,
    const std::string& stderr_path) {
  if (argv.empty()) return absl::InvalidArgumentError("argv is empty");
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    RedirectOrInherit(STDOUT_FILENO, stdout_path);
    RedirectOrInherit(STDERR_FILENO, stderr_path);
    // Tests block no signals of their own, but gtest may have; reset.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return std::unique_ptr<Subprocess>(new Subprocess(pid));
}

Subprocess::~Subprocess() {
  if (Running()) {
    kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(10));
  }
}

void Subprocess::Signal(int signal_number) {
  if (!exit_code_.has_value()) kill(pid_, signal_number);
}

namespace {

// Whether every thread of `pid` is stopped ('T' or 't' in its stat line).
bool AllThreadsStopped(pid_t pid) {
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return false;
  bool stopped = true;
  int seen = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    ++seen;
    const std::string stat =
        ReadFileOrEmpty(absl::StrCat(tasks, "/", entry->d_name, "/stat"));
    // "TID (comm) S ...": the state follows the last ')'.
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size()) continue;
    const char state = stat[paren + 2];
    if (state != 'T' && state != 't') stopped = false;
  }
  closedir(dir);
  return stopped && seen > 0;
}

}  // namespace

bool Subprocess::Stop(std::chrono::milliseconds timeout) {
  Signal(SIGSTOP);
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!AllThreadsStopped(pid_)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

bool Subprocess::Running() {
  return !Wait(std::chrono::milliseconds(0)).has_value();
}

std::optional<int> Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exit_code_.has_value()) {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      exit_code_ = DecodeWaitStatus(status);
    } else if (done < 0) {
      exit_code_ = -1;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return exit_code_;
}

std::optional<int64_t> ResidentBytes(pid_t pid) {
  const std::string status =
      ReadFileOrEmpty(absl::StrCat("/proc/", pid, "/status"));
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    int64_t kib = 0;
    if (absl::ConsumePrefix(&line, "VmRSS:") &&
        absl::ConsumeSuffix(&line, "kB") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib)) {
      return kib * 1024;
    }
  }
  return std::nullopt;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string EnvValue(const std::string& text, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::ConsumePrefix(&line, "export ");
    if (absl::ConsumePrefix(&line, name + "=")) {
      absl::ConsumePrefix(&line, "'");
      absl::ConsumeSuffix(&line, "'");
      return std::string(line);
    }
  }
  return "";
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout) {
  return RunCommandsInParallel({argv}, timeout)[0];
}

std::vector<CommandResult> RunCommandsInParallel(
    const std::vector<std::vector<std::string>>& argvs,
    std::chrono::milliseconds timeout) {
  static std::atomic<int> counter{0};
  const std::string dir = MakeTempDir("cmd");
  std::vector<std::string> outs;
  std::vector<CommandResult> results(argvs.size());
  std::vector<std::unique_ptr<Subprocess>> processes;
  for (size_t i = 0; i < argvs.size(); ++i) {
    outs.push_back(absl::StrCat(dir, "/stdout", counter++));
    auto process = Subprocess::Start(argvs[i], outs[i], outs[i] + ".err");
    if (process.ok()) {
      processes.push_back(*std::move(process));
    } else {
      processes.push_back(nullptr);
      results[i].stderr_text = process.status().ToString();
    }
  }
  for (size_t i = 0; i < argvs.size(); ++i) {
    if (processes[i] == nullptr) continue;
    std::optional<int> code = processes[i]->Wait(timeout);
    if (!code.has_value()) {
      results[i].timed_out = true;
      processes[i]->Signal(SIGKILL);
      code = processes[i]->Wait(std::chrono::seconds(10));
    }
    results[i].exit_code = code.value_or(-1);
    results[i].stdout_text = ReadFileOrEmpty(outs[i]);
    results[i].stderr_text = ReadFileOrEmpty(outs[i] + ".err");
  }
  return results;
}

}  // namespace ctxsel::testing
