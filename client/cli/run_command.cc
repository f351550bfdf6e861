// ctxsel-cli run: select with a claim, run a command on each chosen device,
// and hold the claims exactly as long as the commands run.
//
//   ctxsel-cli run --kernel=saxpy --here --claim=10m -- ./saxpy --n=4096
//   srun -n4 ctxsel-cli run --kernel=saxpy --from_allocation --require=gpu \
//       -- ./saxpy       # each rank claims its own GPU of the step's
//
// 1. Selects with the select flags (select_command.h) and a claim (--claim,
//    default 5m; --wait to queue for a device), held by --holder (default
//    the Slurm step, slurm-<job>.<step>, else user@host:pid).
// 2. Runs COMMAND once per rank (--count, default 1), each with its rank's
//    launch environment (select --format=env), CTXSEL_CLAIM included.
// 3. Renews the claims every third of their duration while COMMAND runs,
//    and forwards SIGTERM and SIGINT to it. A renewal refused because an
//    operator drains the device (DEVICE_DRAINED) sends COMMAND SIGTERM.
// 4. Releases the claims (by id: ranks of one Slurm step share a holder)
//    when the commands have exited, and exits with the status of the lowest
//    rank that failed, else 0 (128 + signal when one was killed by it).
// Before COMMAND starts, the exit codes are select's (command.h); 127 when
// COMMAND is not found, 126 when it cannot be executed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include "base/error_reasons.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "client/cli/command.h"
#include "client/cli/select_answer.h"
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

int ChildExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitFailure;
}

// Whether a renewal failed because an operator drains the device.
bool Drained(const absl::Status& status) {
  const std::optional<google::rpc::ErrorInfo> info =
      GetDetail<google::rpc::ErrorInfo>(status);
  return info.has_value() && info->reason() == kReasonDeviceDrained;
}

// Runs until every one of `children` has exited: forwards SIGINT/SIGTERM to
// those still running, renews `claim_ids` (one per child). The exit code of
// the first child, in order, that failed; 0 when none did.
int Supervise(client::CtxselClient& client, const std::vector<pid_t>& children,
              const std::vector<std::string>& claim_ids, absl::Duration claim,
              const sigset_t& signals) {
  const absl::Duration renew_every = std::max(claim / 3, absl::Seconds(1));
  absl::Time next_renewal = absl::Now() + renew_every;
  std::vector<std::optional<int>> exited(children.size());
  std::vector<bool> renewing(claim_ids.size(), true);
  size_t running = children.size();
  while (true) {
    for (size_t i = 0; i < children.size(); ++i) {
      int status = 0;
      if (!exited[i].has_value() &&
          waitpid(children[i], &status, WNOHANG) == children[i]) {
        exited[i] = ChildExitCode(status);
        --running;
      }
    }
    if (running == 0) break;
    std::optional<int> sig = WaitForSignal(signals, next_renewal - absl::Now());
    if (sig == SIGINT || sig == SIGTERM) {
      for (size_t i = 0; i < children.size(); ++i) {
        if (!exited[i].has_value()) kill(children[i], *sig);
      }
      continue;
    }
    if (sig.has_value() || absl::Now() < next_renewal) continue;
    next_renewal = absl::Now() + renew_every;
    for (size_t i = 0; i < claim_ids.size(); ++i) {
      if (!renewing[i]) continue;
      absl::StatusOr<v1::Claim> renewed =
          client.RenewClaim(claim_ids[i], absl::ToChronoMilliseconds(claim));
      if (renewed.ok()) continue;
      std::fprintf(stderr, "ctxsel-cli run: renewing claim %s: %s\n",
                   claim_ids[i].c_str(), ErrorText(renewed.status()).c_str());
      if (Drained(renewed.status())) {
        // An operator drains the device: stop the command as a scheduler
        // would, and let the claim run out.
        renewing[i] = false;
        if (!exited[i].has_value()) {
          std::fprintf(stderr,
                       "ctxsel-cli run: the device is drained: sending "
                       "SIGTERM to rank %zu (pid %d)\n",
                       i, static_cast<int>(children[i]));
          kill(children[i], SIGTERM);
        }
      } else if (absl::IsNotFound(renewed.status())) {
        renewing[i] = false;  // it has ended; the device may be someone else's
      } else {
        next_renewal = std::min(next_renewal, absl::Now() + kRenewRetry);
      }
    }
  }
  for (const std::optional<int>& code : exited) {
    if (*code != 0) return *code;
  }
  return kExitOk;
}

int RunRun(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError(kRunCommand);
  // Before any gRPC thread exists, so that every thread inherits the mask.
  const sigset_t signals = HandledSignals();
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &signals, &old_mask);

  auto client = ConnectToServer();
  auto request = SelectRequestFromFlags(client.get(), kDefaultClaim);
  if (!request.ok()) return ReportError("run", request.status());
  const absl::Duration claim = FromProtoDuration(request->claim().duration());
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
  if (std::string note = FallbackNote(*request, *answer); !note.empty()) {
    std::fprintf(stderr, "ctxsel-cli: note: %s\n", note.c_str());
  }

  std::vector<pid_t> children;
  std::vector<std::string> claim_ids;
  int exit_code = kExitOk;
  for (int rank = 0; rank < RankCount(*answer); ++rank) {
    claim_ids.push_back(RankClaim(*answer, rank).id());
    const pid_t child = Launch(
        args, ChildEnvironment(RankEnv(*request, *answer, rank)), old_mask);
    if (child < 0) {
      std::fprintf(stderr, "ctxsel-cli run: fork: %s\n", std::strerror(errno));
      exit_code = kExitFailure;
      for (pid_t started : children) kill(started, SIGTERM);
      break;
    }
    children.push_back(child);
  }
  const int children_exit =
      Supervise(*client, children, claim_ids, claim, signals);
  if (exit_code == kExitOk) exit_code = children_exit;
  for (const std::string& id : claim_ids) {
    if (absl::Status released = client->ReleaseClaim(id);
        !released.ok() && !absl::IsNotFound(released)) {
      std::fprintf(stderr, "ctxsel-cli run: releasing claim %s: %s\n",
                   id.c_str(), ErrorText(released).c_str());
    }
  }
  return exit_code;
}

}  // namespace

const Command kRunCommand = {
    "run",
    "run " CTXSEL_CLI_JOB_FLAGS
    " [--claim=DURATION] "
    "[--holder=WHO] [--wait=DURATION [--priority=N]] [--memory=SIZE] "
    "[--compute_percent=N] -- COMMAND [ARGS...]",
    "Claim a device and run COMMAND on it; exit with COMMAND's status.",
    RunRun};

}  // namespace ctxsel::cli
