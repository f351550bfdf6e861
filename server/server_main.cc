// ctxsel-server: serves ctxsel.v1 with gRPC health checking (and, with
// --reflection, server reflection).
//
//   ctxsel-server --listen=0.0.0.0:7070 --data_dir=/var/lib/ctxsel
//       --tls_cert=server.pem --tls_key=server.key --client_ca=ca.pem
//       --tokens_file=/etc/ctxsel/tokens
//   ctxsel-server --insecure --listen=127.0.0.1:0 --port_file=/tmp/port
//   ctxsel-server --metrics_listen=127.0.0.1:9464   # Prometheus /metrics
//   ctxsel-server --data_dir=/var/lib/ctxsel --check_config   # dry run
//
// Variants are durable in --data_dir (SQLite, see server/store/sqlite_store.h;
// one server per directory, backup and restore in docs/operations.md), or
// with --store=etcd://... in etcd, shared by several replicas
// (server/store/etcd/, docs/deployment.md); the inventory is soft state rebuilt
// from agent reports. SIGTERM or SIGINT
// stops it gracefully: in-flight calls get a grace period. SIGHUP rereads
// --tokens_file (docs/security.md). Exit status: 0
// stopped by a signal (or --check_config found no problem), 1 could not
// start, 2 invalid flags (server/main/check_config.h). The wiring is in
// server/main/server_setup.h; this file is flags, start, signal, stop.
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/flags_usage.h"
#include "base/port_file.h"
#include "server/main/check_config.h"
#include "server/main/server_setup.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

// Every flag that sets a ServerOptions field takes its default from there,
// so the defaults live in one place (server_setup.h).
namespace {
const ctxsel::server::ServerOptions& Defaults() {
  static const auto* const defaults = new ctxsel::server::ServerOptions();
  return *defaults;
}
}  // namespace

ABSL_FLAG(std::string, listen, Defaults().listen,
          "Address to serve on, host:port; port 0 picks a free port.");
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound port is written to this file once serving.");
ABSL_FLAG(std::string, metrics_listen, Defaults().metrics_listen,
          "Address of the Prometheus /metrics endpoint, host:port (port 0 "
          "picks a free port), e.g. 127.0.0.1:9464. Unauthenticated: keep it "
          "on loopback or a management network. Empty: no metrics.");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, the bound metrics port is written to this file once "
          "serving.");
ABSL_FLAG(bool, check_config, false,
          "Check the flags, the addresses (bound and let go), --data_dir "
          "and --restore_from, print what would be done, and exit without "
          "serving: 0 when the server would start, 2 otherwise.");
ABSL_FLAG(int, shutdown_grace_ms, 2000,
          "How long in-flight calls may run after SIGTERM/SIGINT.");
ABSL_FLAG(
    std::string, data_dir, Defaults().data_dir,
    "Directory of the durable variant store (created if missing). "
    "Empty: a fresh temporary directory, for this run only (not reused).");
ABSL_FLAG(std::string, store, Defaults().store,
          "Empty: the SQLite store in --data_dir. etcd://HOST:PORT[,HOST:"
          "PORT...]: the store every replica on that etcd shares "
          "(docs/deployment.md).");
ABSL_FLAG(std::string, store_prefix, Defaults().store_prefix,
          "With --store=etcd://...: the key prefix of this deployment "
          "(must end with '/').");
ABSL_FLAG(double, store_utilisation_delta, Defaults().store_utilisation_delta,
          "With --store=etcd://...: a node's record in etcd is rewritten when "
          "one of its devices' utilisation moved by this much since it was "
          "written...");
ABSL_FLAG(absl::Duration, store_utilisation_interval,
          Defaults().store_utilisation_interval,
          "...and then at most once per this interval per node.");
ABSL_FLAG(int64_t, max_store_bytes, Defaults().max_store_bytes,
          "Largest size of DATA_DIR/ctxsel.db in bytes; a registration that "
          "would pass it fails as on a full disk (RESOURCE_EXHAUSTED). "
          "0: only the disk's free space limits it.");
ABSL_FLAG(std::string, restore_from, Defaults().restore_from,
          "A backup file (ctxsel-cli admin backup) to restore into "
          "--data_dir before serving; --data_dir must not hold a store yet. "
          "See docs/operations.md.");
ABSL_FLAG(absl::Duration, heartbeat_interval, Defaults().heartbeat_interval,
          "How often agents are told to send a heartbeat.");
ABSL_FLAG(absl::Duration, node_ttl, Defaults().node_ttl,
          "A node with no heartbeat for this long expires with its devices; "
          "0: 3 x --heartbeat_interval.");
ABSL_FLAG(absl::Duration, suspect_after, Defaults().suspect_after,
          "A node with no heartbeat for this long is suspect: placement "
          "picks its devices only when no healthy device can serve; "
          "0: 2 x --heartbeat_interval.");
ABSL_FLAG(int, max_devices_per_node,
          Defaults().report_limits.max_devices_per_node,
          "Most devices one node may report (RESOURCE_EXHAUSTED beyond).");
ABSL_FLAG(int, max_traits_per_device,
          Defaults().report_limits.max_traits_per_device,
          "Most trait names (kind, arch, isa, vendor, extension together) "
          "one device may report (RESOURCE_EXHAUSTED beyond).");
ABSL_FLAG(int, max_message_bytes, Defaults().max_message_bytes,
          "Largest request or response message, in bytes.");
ABSL_FLAG(int, max_batch_size, Defaults().max_batch_size,
          "Most variants in one RegisterVariants call.");
// Connection limits; docs/operations.md ("Limits") says why each default.
ABSL_FLAG(absl::Duration, max_connection_idle, Defaults().max_connection_idle,
          "A connection with no call for this long is closed (agents hold a "
          "heartbeat stream, so they are never idle).");
ABSL_FLAG(absl::Duration, max_connection_age, Defaults().max_connection_age,
          "A connection older than this is sent GOAWAY, and its streams end "
          "after --max_connection_age_grace (clients reconnect): what any "
          "credential can hold, revoked or not. 0: no limit.");
ABSL_FLAG(absl::Duration, max_connection_age_grace,
          Defaults().max_connection_age_grace,
          "How long calls may run on a connection past --max_connection_age.");
ABSL_FLAG(int, max_concurrent_streams, Defaults().max_concurrent_streams,
          "Calls open at once on one connection; 0: no limit.");
ABSL_FLAG(int, max_header_list_bytes, Defaults().max_header_list_bytes,
          "Largest header list (metadata) of one call, in bytes.");
ABSL_FLAG(int, max_threads, Defaults().max_threads,
          "Threads that run the calls which wait on the store (registrations, "
          "claims, backups); 16 x as many may queue, more are refused. Other "
          "calls and streams hold no thread.");
ABSL_FLAG(int64_t, max_grpc_memory_bytes, Defaults().max_grpc_memory_bytes,
          "Memory gRPC's buffers may take (requests still arriving, before "
          "any credential is checked); past it gRPC shrinks windows and "
          "closes connections. Default: a quarter of the machine's (or the "
          "cgroup's) memory, at most 1 GiB. 0: no limit.");
ABSL_FLAG(int, fd_headroom, Defaults().fd_headroom,
          "File descriptors kept free for everything but new connections; a "
          "connection that would leave fewer is closed at once.");
ABSL_FLAG(bool, reflection, Defaults().reflection,
          "Serve gRPC server reflection (grpc.reflection.v1alpha) for "
          "generic clients such as grpcurl; it needs a token or client "
          "certificate like any other read.");
ABSL_FLAG(std::string, tls_cert, Defaults().tls_cert,
          "PEM certificate (chain) the server presents; with --tls_key.");
ABSL_FLAG(std::string, tls_key, Defaults().tls_key,
          "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, client_ca, Defaults().client_ca,
          "PEM CA that signs client (agent) certificates; a certificate's "
          "SAN or CN is its node. Empty: no client certificates.");
ABSL_FLAG(bool, insecure, Defaults().insecure,
          "Serve plaintext without TLS (local tests and demos only).");
ABSL_FLAG(std::string, tokens_file, Defaults().tokens_file,
          "Bearer tokens: lines 'ROLE NAME SHA256' (ctxsel-cli admin token "
          "prints them); reread on SIGHUP. See docs/security.md.");
ABSL_FLAG(double, max_reports_per_minute,
          Defaults().principal_limits.reports_per_minute,
          "Node reports one node may send per minute (bursts of as many); "
          "beyond: RESOURCE_EXHAUSTED for that node only. 0: no limit.");
ABSL_FLAG(double, max_heartbeats_per_second,
          Defaults().principal_limits.heartbeats_per_second,
          "Heartbeats one node may send per second; 0: no limit.");
ABSL_FLAG(double, max_registrations_per_minute,
          Defaults().principal_limits.registrations_per_minute,
          "RegisterVariants calls one principal may make per minute; 0: no "
          "limit.");
ABSL_FLAG(int, max_streams_per_principal,
          Defaults().principal_limits.max_streams,
          "Heartbeat and watch streams one principal may hold open; 0: no "
          "limit.");

namespace {

// Exit status for flags no server can run with (--check_config's too).
constexpr int kExitBadConfig = 2;

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
  options.listen = absl::GetFlag(FLAGS_listen);
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.store = absl::GetFlag(FLAGS_store);
  options.store_prefix = absl::GetFlag(FLAGS_store_prefix);
  options.store_utilisation_delta =
      absl::GetFlag(FLAGS_store_utilisation_delta);
  options.store_utilisation_interval =
      absl::GetFlag(FLAGS_store_utilisation_interval);
  options.max_store_bytes = absl::GetFlag(FLAGS_max_store_bytes);
  options.restore_from = absl::GetFlag(FLAGS_restore_from);
  options.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  options.node_ttl = absl::GetFlag(FLAGS_node_ttl);
  options.suspect_after = absl::GetFlag(FLAGS_suspect_after);
  options.report_limits.max_devices_per_node =
      absl::GetFlag(FLAGS_max_devices_per_node);
  options.report_limits.max_traits_per_device =
      absl::GetFlag(FLAGS_max_traits_per_device);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  options.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options.max_connection_age_grace =
      absl::GetFlag(FLAGS_max_connection_age_grace);
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.max_header_list_bytes = absl::GetFlag(FLAGS_max_header_list_bytes);
  options.max_threads = absl::GetFlag(FLAGS_max_threads);
  options.max_grpc_memory_bytes = absl::GetFlag(FLAGS_max_grpc_memory_bytes);
  options.fd_headroom = absl::GetFlag(FLAGS_fd_headroom);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.reflection = absl::GetFlag(FLAGS_reflection);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.client_ca = absl::GetFlag(FLAGS_client_ca);
  options.insecure = absl::GetFlag(FLAGS_insecure);
  options.tokens_file = absl::GetFlag(FLAGS_tokens_file);
  options.principal_limits.reports_per_minute =
      absl::GetFlag(FLAGS_max_reports_per_minute);
  options.principal_limits.heartbeats_per_second =
      absl::GetFlag(FLAGS_max_heartbeats_per_second);
  options.principal_limits.registrations_per_minute =
      absl::GetFlag(FLAGS_max_registrations_per_minute);
  options.principal_limits.max_streams =
      absl::GetFlag(FLAGS_max_streams_per_principal);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Serves the ctxsel.v1 API.");
  ctxsel::SetFlagsUsage("ctxsel-server");
  absl::ParseCommandLine(argc, argv);
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
  const sigset_t stop_signals = BlockStopSignals();
  if (absl::StatusOr<int64_t> limit = ctxsel::server::RaiseOpenFileLimit();
      limit.ok()) {
    spdlog::info("open file limit {}", *limit);
  } else {
    spdlog::warn("open file limit unchanged: {}",
                 std::string(limit.status().message()));
  }

  const ctxsel::server::ServerOptions options = OptionsFromFlags();
  if (absl::GetFlag(FLAGS_check_config)) {
    const ctxsel::server::ConfigCheck check =
        ctxsel::server::CheckConfig(options);
    for (const std::string& line : check.plan)
      std::printf("%s\n", line.c_str());
    for (const std::string& problem : check.problems) {
      std::fprintf(stderr, "ctxsel-server: %s\n", problem.c_str());
    }
    std::printf("%s\n",
                check.problems.empty() ? "config OK" : "config invalid");
    return check.problems.empty() ? 0 : kExitBadConfig;
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

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) == 0 &&
         signal_number == SIGHUP) {
    absl::StatusOr<int> revoked = (*server)->ReloadTokens();
    if (revoked.ok()) {
      spdlog::info(
          "SIGHUP: reread --tokens_file; ended {} open stream(s) whose "
          "credential it revoked",
          *revoked);
    } else {
      spdlog::error("SIGHUP: kept the previous tokens: {}",
                    std::string(revoked.status().message()));
    }
  }
  spdlog::info("received signal {}, shutting down", signal_number);
  (*server)->Shutdown(
      absl::Milliseconds(absl::GetFlag(FLAGS_shutdown_grace_ms)));
  spdlog::info("stopped");
  return 0;
}
