// ctxsel-server: serves ctxsel.v1 with gRPC health checking (and, with
// --reflection, server reflection).
//
//   ctxsel-server --listen=0.0.0.0:7070 --data_dir=/var/lib/ctxsel
//       --tls_cert=server.pem --tls_key=server.key --client_ca=ca.pem
//       --tokens_file=/etc/ctxsel/tokens
//   ctxsel-server --insecure --listen=127.0.0.1:0 --port_file=/tmp/port
//   ctxsel-server --metrics_listen=127.0.0.1:9464   # Prometheus /metrics
//   ctxsel-server --data_dir=/var/lib/ctxsel --check_config   # dry run
//   sudo ctxsel-server --check_config --as_user=ctxsel ...   # as the service
//
// Variants are durable in --data_dir (SQLite, see server/store/sqlite_store.h;
// one server per directory, backup and restore in docs/operations.md), or
// with --store=etcd://... in etcd, shared by several replicas
// (server/store/etcd/, docs/deployment.md); the inventory is soft state rebuilt
// from agent reports. SIGTERM or SIGINT
// stops it gracefully: in-flight calls get a grace period. SIGHUP rereads
// --tokens_file and --revoked_certs (docs/security.md). Exit status: 0
// stopped by a signal (or --check_config found no problem), 1 could not
// start, 2 invalid flags or a file they name that is missing or unreadable
// (server/main/check_config.h), 3 stopped because it no longer accepted new
// connections (server/main/self_probe.h; the service manager restarts it).
// Under systemd (Type=notify) it sends READY=1 once serving and, with
// WatchdogSec, WATCHDOG=1 after each passing self-probe. The wiring is in
// server/main/server_setup.h; this file is flags, start, signal, stop.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/flags_usage.h"
#include "base/port_file.h"
#include "server/main/check_config.h"
#include "server/main/grpc_log.h"
#include "server/main/sd_notify.h"
#include "server/main/self_probe.h"
#include "server/main/server_setup.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

// Every flag that sets a ServerOptions field takes its default from there,
// so the defaults live in one place (server_setup.h), and is bound to it in
// one place (server_flags.def).
namespace {
const ctxsel::server::ServerOptions& Defaults() {
  static const auto* const defaults = new ctxsel::server::ServerOptions();
  return *defaults;
}
}  // namespace

// The flags that set ServerOptions fields, each with its field's default.
#define SERVER_FLAG(type, name, field, help) \
  ABSL_FLAG(type, name, Defaults().field, help);
#include "server/server_flags.def"
#undef SERVER_FLAG

// The flags of this run only, which no ServerOptions field holds.
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound port is written to this file once serving.");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, the bound metrics port is written to this file once "
          "serving.");
ABSL_FLAG(bool, check_config, false,
          "Check the flags, the addresses (bound and let go), the files the "
          "server reads (TLS, client CA, tokens), --data_dir and "
          "--restore_from, print what would be done, and exit without "
          "serving: 0 when the server would start, 2 otherwise.");
ABSL_FLAG(std::string, as_user, "",
          "With --check_config: run the check as this user (its groups, "
          "group and user id; needs root), as the service would run, so a "
          "file that user cannot read or a directory it cannot write fails "
          "the check. Empty: as the caller.");
ABSL_FLAG(int, shutdown_grace_ms, 2000,
          "How long in-flight calls may run after SIGTERM/SIGINT.");

namespace {

// Exit status for flags no server can run with (--check_config's too), as
// for a usage error (base/flags_usage.h).
constexpr int kExitBadConfig = ctxsel::kExitUsage;
// Exit status when new connections were no longer accepted.
constexpr int kExitNotAccepting = 3;

// How often to probe: --self_probe_interval, and at least twice per
// watchdog period when the service manager watches (zero: no probe).
absl::Duration ProbeInterval(const ctxsel::server::ServerOptions& options) {
  absl::Duration interval = options.self_probe_interval;
  if (std::optional<absl::Duration> watchdog =
          ctxsel::server::SdWatchdogInterval()) {
    interval = interval == absl::ZeroDuration()
                   ? *watchdog / 2
                   : std::min(interval, *watchdog / 2);
  }
  return interval;
}

void Notify(absl::string_view state) {
  if (absl::Status sent = ctxsel::server::SdNotify(state); !sent.ok()) {
    spdlog::warn("{}", std::string(sent.message()));
  }
}

// Blocks SIGTERM/SIGINT/SIGHUP in every thread (call before starting any) so
// that only sigwait() in main receives them.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

ctxsel::server::ServerOptions OptionsFromFlags() {
  ctxsel::server::ServerOptions options;
#define SERVER_FLAG(type, name, field, help) \
  options.field = absl::GetFlag(FLAGS_##name);
#include "server/server_flags.def"
#undef SERVER_FLAG
  return options;
}

// --check_config: prints the plan, the problems on stderr, and the verdict;
// returns the exit status a start would have.
int PrintConfigCheck(const ctxsel::server::ServerOptions& options) {
  const ctxsel::server::ConfigCheck check =
      ctxsel::server::CheckConfig(options);
  for (const std::string& line : check.plan) std::printf("%s\n", line.c_str());
  for (const std::string& problem : check.problems) {
    std::fprintf(stderr, "ctxsel-server: %s\n", problem.c_str());
  }
  std::printf("%s\n", check.problems.empty() ? "config OK" : "config invalid");
  std::fflush(nullptr);
  return check.problems.empty() ? 0 : kExitBadConfig;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Serves the ctxsel.v1 API.");
  ctxsel::SetFlagsUsage("ctxsel-server");
  ctxsel::ParseFlagsOrExit(argc, argv);
  // Debian's Abseil checks lock order on every Lock(), which shows in
  // profiles; the order is documented per class and covered by the tests,
  // which keep the check on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // glibc gives each thread that allocates under contention an arena of
  // its own, up to 8 per core, and freed memory stays in the arena that
  // served it: with gRPC's callback threads serving 10,000 heartbeat
  // streams that held ~50 MiB (RSS 320 -> 269 MiB at 80k devices). The
  // server's allocations are short and rarely contended.
  mallopt(M_ARENA_MAX, 2);
  // Logs go to stderr; stdout stays free for anything a wrapper may parse.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ctxsel-server"));
  // gRPC core's lines quote client-chosen headers: escaped, like ours.
  ctxsel::server::RouteGrpcLogToSpdlog();
  const sigset_t stop_signals = BlockStopSignals();
  if (absl::StatusOr<int64_t> limit = ctxsel::server::RaiseOpenFileLimit();
      limit.ok()) {
    spdlog::info("open file limit {}", *limit);
  } else {
    spdlog::warn("open file limit unchanged: {}",
                 std::string(limit.status().message()));
  }

  const ctxsel::server::ServerOptions options = OptionsFromFlags();
  const std::string as_user = absl::GetFlag(FLAGS_as_user);
  if (!as_user.empty() && !absl::GetFlag(FLAGS_check_config)) {
    std::fprintf(stderr,
                 "ctxsel-server: --as_user: only with --check_config\n");
    return kExitBadConfig;
  }
  if (absl::GetFlag(FLAGS_check_config)) {
    if (as_user.empty()) return PrintConfigCheck(options);
    absl::StatusOr<int> code = ctxsel::server::RunAsUser(
        as_user, [&options] { return PrintConfigCheck(options); });
    if (!code.ok()) {
      std::fprintf(stderr, "ctxsel-server: %s\n",
                   std::string(code.status().message()).c_str());
      std::printf("config invalid\n");
      return kExitBadConfig;
    }
    return *code;
  }
  if (const std::vector<std::string> problems =
          ctxsel::server::LimitProblems(options);
      !problems.empty()) {
    for (const std::string& problem : problems) spdlog::error("{}", problem);
    return kExitBadConfig;
  }

  auto server = ctxsel::server::BuildServer(options);
  if (!server.ok()) {
    spdlog::error("{}", std::string(server.status().message()));
    // A file the flags name that is missing, unreadable or invalid will be
    // so again: exit as a bad configuration (the unit's
    // RestartPreventExitStatus), not as a failure to retry every 2 s.
    switch (server.status().code()) {
      case absl::StatusCode::kInvalidArgument:
      case absl::StatusCode::kNotFound:
      case absl::StatusCode::kPermissionDenied:
        return kExitBadConfig;
      default:
        return 1;
    }
  }
  // A port file, when asked, for each listening port.
  const std::pair<std::string, int> port_files[] = {
      {absl::GetFlag(FLAGS_port_file), (*server)->port()},
      {absl::GetFlag(FLAGS_metrics_port_file), (*server)->metrics_port()},
  };
  for (const auto& [path, port] : port_files) {
    if (path.empty()) continue;
    absl::Status written = ctxsel::WritePortFile(path, port);
    if (!written.ok()) {
      spdlog::error("cannot write {}: {}", path,
                    std::string(written.message()));
      return 1;  // destroying the server stops it
    }
  }

  // The probe's give_up ends the sigwait below with a SIGTERM of its own.
  std::atomic<bool> not_accepting{false};
  std::unique_ptr<ctxsel::server::SelfProbe> probe;
  if (const absl::Duration interval = ProbeInterval(options);
      interval > absl::ZeroDuration()) {
    ctxsel::server::RunningServer* running = server->get();
    probe = std::make_unique<ctxsel::server::SelfProbe>(
        ctxsel::server::SelfProbeOptions{
            .interval = interval, .failures = options.self_probe_failures},
        [running, interval] { return running->ProbeNewConnection(interval); },
        [] { Notify("WATCHDOG=1"); },
        [&not_accepting](const absl::Status& last) {
          spdlog::error(
              "self-probe: new connections are not accepted ({}); exiting "
              "with status {} so that the service manager restarts the "
              "server",
              std::string(last.message()), kExitNotAccepting);
          not_accepting = true;
          kill(getpid(), SIGTERM);
        });
  }
  Notify("READY=1");

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) == 0 &&
         signal_number == SIGHUP) {
    absl::StatusOr<int> revoked = (*server)->ReloadTokens();
    if (revoked.ok()) {
      spdlog::info(
          "SIGHUP: reread --tokens_file and --revoked_certs; ended {} open "
          "stream(s) whose credential they revoked",
          *revoked);
    } else {
      spdlog::error("SIGHUP: kept the previous tokens: {}",
                    std::string(revoked.status().message()));
    }
  }
  spdlog::info("received signal {}, shutting down", signal_number);
  Notify("STOPPING=1");
  probe.reset();
  (*server)->Shutdown(
      absl::Milliseconds(absl::GetFlag(FLAGS_shutdown_grace_ms)));
  spdlog::info("stopped");
  return not_accepting ? kExitNotAccepting : 0;
}
