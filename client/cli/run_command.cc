// ctxsel-cli run: select with a claim, run a command on the chosen device,
// and hold the claim exactly as long as the command runs.
//
//   ctxsel-cli run --kernel=saxpy --here --claim=10m -- ./saxpy --n=4096
//
// 1. Selects with the select flags (select_command.h) and a claim (--claim,
//    default 5m; --wait to queue for a device).
// 2. Runs COMMAND with the launch environment of select --format=env plus
//    CTXSEL_CLAIM.
// 3. Renews the claim every third of its duration while COMMAND runs, and
//    forwards SIGTERM and SIGINT to it.
// 4. Releases the claim when COMMAND exits and exits with its status (128 +
//    signal when it was killed by one).
// Before COMMAND starts, the exit codes are select's (command.h); 127 when
// COMMAND is not found, 126 when it cannot be executed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/proto_time.h"
#include "client/cli/command.h"
#include "client/cli/select_command.h"
#include "client/cli/service_output.h"

extern char** environ;

namespace ctxsel::cli {
namespace {

// The claim run makes when --claim is not given.
constexpr absl::Duration kDefaultClaim = absl::Minutes(5);
// A renewal that failed for a passing reason (server restarting) is tried
// again this soon.
constexpr absl::Duration kRenewRetry = absl::Seconds(1);

// The signals run handles itself: blocked in every thread, taken with
// sigtimedwait, so that gRPC's threads never see them.
sigset_t HandledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  return set;
}

// Waits up to `timeout` for one of `set`; the signal, or nullopt on timeout.
std::optional<int> WaitForSignal(const sigset_t& set, absl::Duration timeout) {
  timeout = std::max(timeout, absl::ZeroDuration());
  const timespec ts = absl::ToTimespec(timeout);
  int sig;
  do {
    sig = sigtimedwait(&set, nullptr, &ts);
  } while (sig < 0 && errno == EINTR);
  if (sig < 0) return std::nullopt;
  return sig;
}

// "NAME=value" strings: this process's environment with `env` set on top.
std::vector<std::string> ChildEnvironment(const EnvVars& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : env) replaced = replaced || n == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Forks and execs `command` with `env` and the signal mask `child_mask`;
// everything the child needs is prepared before fork, so the child only
// calls async-signal-safe functions.
pid_t Launch(std::vector<std::string> command, std::vector<std::string> env,
             const sigset_t& child_mask) {
  std::vector<char*> argv = CStrings(command);
  std::vector<char*> envp = CStrings(env);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  sigprocmask(SIG_SETMASK, &child_mask, nullptr);
  execvpe(argv[0], argv.data(), envp.data());
  const int error = errno;
  const char* what = strerror(error);
  (void)!write(STDERR_FILENO, "ctxsel-cli run: ", 16);
  (void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
  (void)!write(STDERR_FILENO, ": ", 2);
  (void)!write(STDERR_FILENO, what, strlen(what));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(error == ENOENT ? 127 : 126);
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitFailure;
}

// Runs until `child` exits: forwards SIGINT/SIGTERM, renews `claim_id`.
int Supervise(client::CtxselClient& client, pid_t child,
              const std::string& claim_id, absl::Duration claim,
              const sigset_t& signals) {
  const absl::Duration renew_every = std::max(claim / 3, absl::Seconds(1));
  absl::Time next_renewal = absl::Now() + renew_every;
  bool renewing = true;
  while (true) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) return ExitCodeOf(status);
    std::optional<int> sig = WaitForSignal(
        signals, renewing ? next_renewal - absl::Now() : absl::Hours(1));
    if (sig == SIGINT || sig == SIGTERM) {
      kill(child, *sig);
      continue;
    }
    if (sig.has_value() || !renewing || absl::Now() < next_renewal) continue;
    absl::StatusOr<v1::Claim> renewed =
        client.RenewClaim(claim_id, absl::ToChronoMilliseconds(claim));
    next_renewal = absl::Now() + renew_every;
    if (renewed.ok()) continue;
    std::fprintf(stderr, "ctxsel-cli run: renewing claim %s: %s\n",
                 claim_id.c_str(), ErrorText(renewed.status()).c_str());
    if (absl::IsNotFound(renewed.status())) {
      renewing = false;  // it has ended; the device may be someone else's
    } else {
      next_renewal = absl::Now() + kRenewRetry;
    }
  }
}

int RunRun(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError(kRunCommand);
  // Before any gRPC thread exists, so that every thread inherits the mask.
  const sigset_t signals = HandledSignals();
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &signals, &old_mask);

  auto request = SelectRequestFromFlags();
  if (!request.ok()) return ReportError("run", request.status());
  if (!request->has_claim()) {
    *request->mutable_claim()->mutable_duration() =
        ToProtoDuration(kDefaultClaim);
    request->mutable_claim()->set_holder(DefaultHolder());
  }
  const absl::Duration claim = FromProtoDuration(request->claim().duration());
  auto client = ConnectToServer();
  std::optional<int> stopped_by;
  auto answer = SelectWaiting(
      *client, *request, absl::GetFlag(FLAGS_wait), [&](absl::Duration d) {
        const absl::Time until = absl::Now() + d;
        while (absl::Now() < until) {
          std::optional<int> sig = WaitForSignal(signals, until - absl::Now());
          if (sig == SIGINT || sig == SIGTERM) {
            stopped_by = sig;
            return false;
          }
        }
        return true;
      });
  if (stopped_by.has_value()) return 128 + *stopped_by;
  if (!answer.ok()) return ReportError("run", answer.status());

  const pid_t child =
      Launch(args, ChildEnvironment(LaunchEnv(*request, *answer)), old_mask);
  int exit_code;
  if (child < 0) {
    std::fprintf(stderr, "ctxsel-cli run: fork: %s\n", std::strerror(errno));
    exit_code = kExitFailure;
  } else {
    exit_code = Supervise(*client, child, answer->claim().id(), claim, signals);
  }
  if (absl::Status released = client->ReleaseClaim(answer->claim().id());
      !released.ok() && !absl::IsNotFound(released)) {
    std::fprintf(stderr, "ctxsel-cli run: releasing claim %s: %s\n",
                 answer->claim().id().c_str(), ErrorText(released).c_str());
  }
  return exit_code;
}

}  // namespace

const Command kRunCommand = {
    "run",
    "run " CTXSEL_CLI_JOB_FLAGS
    " [--claim=DURATION] "
    "[--holder=WHO] [--wait=DURATION] -- COMMAND [ARGS...]",
    "Claim a device and run COMMAND on it; exit with COMMAND's status.",
    RunRun};

}  // namespace ctxsel::cli
