// server_setup.h: wires a ctxsel server together — the variant store and
// registry, the device claims, the inventory, the Placer between them, the
// five ctxsel.v1 services, health checking and, when asked, reflection —
// and starts it listening, and serves Prometheus metrics when asked.
// ctxsel-server's main() is flags, BuildServer(), a signal, Shutdown();
// tests can start the same server in-process.
//
//   ServerOptions options;
//   options.listen = "127.0.0.1:0";
//   options.data_dir = "/var/lib/ctxsel";
//   absl::StatusOr<std::unique_ptr<RunningServer>> server =
//       BuildServer(options);
//   if (!server.ok()) return Fail(server.status());
//   Connect(absl::StrCat("127.0.0.1:", (*server)->port()));
//   ...
//   (*server)->Shutdown(absl::Seconds(2));
#ifndef CTXSEL_SERVER_MAIN_SERVER_SETUP_H_
#define CTXSEL_SERVER_MAIN_SERVER_SETUP_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/metrics_endpoint.h"
#include "server/access/auth.h"
#include "server/claims/claims.h"
#include "server/claims/cordons.h"
#include "server/fleet/inventory.h"
#include "server/main/housekeeping.h"
#include "server/metrics/metrics.h"
#include "server/placement/placer.h"
#include "server/placement/placer_bridge.h"
#include "server/registry/variant_registry.h"
#include "server/replicas/node_sync.h"
#include "server/replicas/replica_sync.h"
#include "server/rpc/admin_service.h"
#include "server/rpc/ctxsel_service.h"
#include "server/rpc/inventory_service.h"
#include "server/rpc/listener.h"
#include "server/rpc/placement_service.h"
#include "server/rpc/reflection_service.h"
#include "server/rpc/variants_service.h"
#include "server/rpc/worker_pool.h"
#include "server/store/etcd/etcd_store.h"
#include "server/store/store.h"
#include "server/store/store_health.h"

namespace ctxsel::server {

// What gRPC's buffers may hold unless told otherwise: a quarter of the
// memory the process may use — the machine's `physical_bytes`, or its
// cgroup's limit when one is set (`cgroup_limit_bytes` > 0) and lower — and
// at most 1 GiB. Those buffers fill before any handler runs, so before
// authentication: a half-sent 4 MiB request is 4 MiB held for anyone.
int64_t GrpcMemoryBudget(int64_t physical_bytes, int64_t cgroup_limit_bytes);
// GrpcMemoryBudget() of this machine and of this process's cgroup (v2: the
// lowest memory.max on its path).
int64_t DefaultGrpcMemoryBytes();

// What ctxsel-server's flags set: server/server_flags.def binds each flag to
// its field here and takes its default from here.
struct ServerOptions {
  // host:port; port 0 picks a free port (RunningServer::port() tells which).
  std::string listen = "127.0.0.1:7070";
  // The durable store's directory (variants and claims), created if
  // missing. Empty: a fresh temporary directory, for this run only.
  std::string data_dir;
  // See SqliteStoreOptions: a cap on ctxsel.db's size (0: the disk's), and
  // a backup to restore into a data_dir that holds no store yet.
  int64_t max_store_bytes = 0;
  std::string restore_from;
  // Empty: the SQLite store in data_dir. "etcd://HOST:PORT[,HOST:PORT...]":
  // the store shared by every replica on that etcd (server/store/etcd/,
  // docs/deployment.md), its keys under store_prefix.
  std::string store;
  std::string store_prefix = "/ctxsel/";
  // With etcd: how the replica checks etcd and proves itself to it
  // (LoadEtcdSecurity(); docs/deployment.md, "Securing etcd"): PEM files of
  // etcd's CA (set: TLS) and of a client certificate and key, and an etcd
  // user with the file of its password. Empty: plaintext, no etcd
  // authentication.
  std::string etcd_ca;
  std::string etcd_cert;
  std::string etcd_key;
  std::string etcd_user;
  std::string etcd_password_file;
  // With etcd: a node's record is rewritten when a device's utilisation
  // moved by this much since it was written, at most once per interval
  // (server/replicas/node_sync.h).
  double store_utilisation_delta = 0.1;
  absl::Duration store_utilisation_interval = absl::Seconds(30);
  absl::Duration heartbeat_interval = absl::Seconds(1);
  // Zero: 3 x heartbeat_interval.
  absl::Duration node_ttl = absl::ZeroDuration();
  // Zero: 2 x heartbeat_interval (one interval plus one of grace).
  absl::Duration suspect_after = absl::ZeroDuration();
  ReportLimits report_limits;
  int max_message_bytes = 4 << 20;  // requests and responses
  int max_batch_size = 1000;        // variants per RegisterVariants call

  // Limits on what one client can hold (docs/operations.md, "Limits").
  // A connection with no call for this long is closed; agents keep their
  // heartbeat stream open, so they are never idle.
  absl::Duration max_connection_idle = absl::Minutes(1);
  // A connection older than this is asked to go away (GOAWAY); its calls
  // then get max_connection_age_grace to finish, and its streams end.
  // This bounds what any credential, revoked or not, can hold: a stream
  // outlives nothing longer.
  // Agents and watchers reconnect (and re-report) on their own. Zero: no
  // limit.
  absl::Duration max_connection_age = absl::Hours(1);
  absl::Duration max_connection_age_grace = absl::Seconds(30);
  // Calls open at once on one connection (HTTP/2 SETTINGS); 0: no limit.
  int max_concurrent_streams = 100;
  // Largest header list (metadata) of one call, in bytes.
  int max_header_list_bytes = 8 << 10;
  // Threads that run the handlers which wait on the store (registrations,
  // claims, backups; server/rpc/worker_pool.h); up to 16 x as many such
  // calls may wait for one, more are refused (RESOURCE_EXHAUSTED). Every
  // other call and stream holds none (gRPC's callback threads, or for
  // heartbeats the heartbeat_queues).
  // SQLite takes one write at a time; 16 keeps as many etcd round trips in
  // flight.
  int max_threads = 16;
  // Completion queues, each with a thread, that serve the Heartbeat streams
  // (server/rpc/heartbeat_queues.h); 0: DefaultHeartbeatQueues() of this
  // machine's cores.
  int heartbeat_queues = 0;
  // Memory gRPC's buffers may take, in bytes (gRPC's resource quota): past
  // it gRPC shrinks its read buffers and flow-control windows, then closes
  // connections. 0: no limit.
  int64_t max_grpc_memory_bytes = DefaultGrpcMemoryBytes();
  // Descriptors kept free for everything but new connections; a connection
  // that would leave fewer is closed at once (server/rpc/listener.h).
  int fd_headroom = 64;
  // ctxsel-server checks this often that it accepts new connections
  // (RunningServer::ProbeNewConnection, each within this long), and exits
  // after self_probe_failures failures in a row, so that the service
  // manager restarts it; its watchdog pings follow passing probes
  // (server/main/self_probe.h). Zero: no probe (unless the service manager
  // asks for a watchdog).
  absl::Duration self_probe_interval = absl::Seconds(5);
  int self_probe_failures = 3;
  // host:port of the Prometheus /metrics endpoint (docs/operations.md,
  // "Metrics"); port 0 picks a free one. Empty: no metrics are kept.
  std::string metrics_listen;

  // Serve gRPC server reflection (server/rpc/reflection_service.h), which
  // needs a credential like any other read. Off: generic clients (grpcurl)
  // need the .proto.
  bool reflection = false;

  // Security (docs/security.md). TLS needs both PEM files; without them
  // the server refuses to start unless `insecure` says plaintext is meant.
  std::string tls_cert;
  std::string tls_key;
  // CA that verifies client certificates (mTLS); a client that presents a
  // certificate this CA did not sign is refused in the handshake. Empty:
  // no client certificates are asked for.
  std::string client_ca;
  bool insecure = false;
  // Bearer tokens and certificate roles (server/access/auth.h). With TLS every
  // call but health needs a token or a client certificate;
  // with `insecure` and no tokens_file every call is allowed.
  std::string tokens_file;
  // The certificate identity (SAN, or CN) of the front proxy
  // (tools/front/haproxy.cfg): on its connections the client certificate
  // is the one its x-ctxsel-client-cert header names, and its own names
  // nobody. Empty: no front; that header is never read.
  std::string front_identity;
  // Client certificates refused by fingerprint or name, reread with
  // tokens_file (server/access/client_cert.h). Empty: none.
  std::string revoked_certs;
  // Per-principal rates and streams (server/access/principal_limits.h); applied
  // when calls are authenticated.
  PrincipalLimitOptions principal_limits;
};

// The derived defaults, written once: options.node_ttl, or 3 x
// heartbeat_interval when zero; options.suspect_after, or 2 x
// heartbeat_interval (one interval plus one of grace) when zero.
absl::Duration EffectiveNodeTtl(const ServerOptions& options);
absl::Duration EffectiveSuspectAfter(const ServerOptions& options);

// The etcd credentials options.etcd_* name, read as a start reads them:
// InvalidArgumentError naming the flag for a file that cannot be read, a
// certificate or key file without a PEM block, an empty password, a flag
// without --store=etcd://, or a combination EtcdClient refuses (half a
// pair, a user without TLS). Both BuildServer and --check_config use it.
absl::StatusOr<etcd::EtcdSecurity> LoadEtcdSecurity(
    const ServerOptions& options);

// A serving ctxsel server and the parts it serves from. Destroying it stops
// the server (no grace period) and the housekeeping thread.
class RunningServer {
 public:
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;
  ~RunningServer();

  // The bound port (the chosen one when ServerOptions::listen had port 0).
  int port() const { return port_; }
  // The bound metrics port; 0 without ServerOptions::metrics_listen.
  int metrics_port() const {
    return metrics_endpoint_ != nullptr ? metrics_endpoint_->port() : 0;
  }
  // True while a shared store (etcd) cannot be reached: reads answer from
  // the last state this replica had. Always false for SQLite. The health
  // service reports it as kStoreHealthService: NOT_SERVING while stale.
  bool store_stale() const;
  static constexpr char kStoreHealthService[] = "ctxsel.store";
  // The node TTL in effect (ServerOptions::node_ttl or its default).
  absl::Duration node_ttl() const { return node_ttl_; }
  VariantRegistry& registry() { return *registry_; }
  Inventory& inventory() { return *inventory_; }
  const placement::Placer& placer() const { return placer_; }
  // Rereads ServerOptions::tokens_file and revoked_certs (ctxsel-server
  // does on SIGHUP) and ends the open streams (heartbeats, watches,
  // reflection) whose credential they revoked, with UNAUTHENTICATED; returns
  // how many. On an error the previous tokens stay in force.
  absl::StatusOr<int> ReloadTokens() { return authorizer_->Load(); }

  // What a new client does: a connection of its own to the listening port
  // (over loopback when it listens on every address), with TLS when the
  // server has it (the server's certificate is not checked: the probe asks
  // whether connections are accepted, not who answers), and a health check
  // on it within `timeout`. OK when it answered; the error otherwise
  // (server/main/self_probe.h runs it).
  absl::Status ProbeNewConnection(absl::Duration timeout) const;

  // Reports NOT_SERVING to health checks (the server's and every service's),
  // refuses new calls, lets in-flight
  // calls run for up to `grace`, then cancels the rest and returns.
  void Shutdown(absl::Duration grace);

 private:
  friend absl::StatusOr<std::unique_ptr<RunningServer>> BuildServer(
      const ServerOptions& options);
  RunningServer() = default;

  absl::Status OpenVariants(const ServerOptions& options);
  absl::StatusOr<std::unique_ptr<Store>> OpenStore(
      const ServerOptions& options);
  absl::Status OpenClaims();
  // With --store=etcd://: follows the other replicas' changes.
  absl::Status StartReplicaSync();
  void MakeServices(const ServerOptions& options);
  absl::Status Listen(const ServerOptions& options);
  // With TLS: gRPC's own listening port (see Listen()).
  absl::Status ListenTls(const ServerOptions& options,
                         grpc::ServerBuilder& builder);
  absl::Status ServeMetrics(const ServerOptions& options);
  // Health: every service SERVING but those that write the store, which
  // follow `available` (store_health.h). No-op before the server starts
  // and after Shutdown.
  void SetStoreServing(bool available) ABSL_LOCKS_EXCLUDED(health_mu_);
  void PublishHealth() ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_mu_);

  // Declaration order is construction order; destruction runs backwards,
  // so the server stops before the services and state it calls into.
  std::unique_ptr<Authorizer> authorizer_;
  // Null without ServerOptions::metrics_listen; the parts below take it as
  // an optional pointer.
  std::unique_ptr<Metrics> metrics_;
  std::string data_dir_;
  std::unique_ptr<Store> store_;
  // The etcd store and the health wrapper inside store_ (which may meter
  // them); etcd_store_ is null with SQLite.
  etcd::EtcdStore* etcd_store_ = nullptr;
  StoreHealth* store_health_ = nullptr;
  placement::Placer placer_;
  PlacerBridge bridge_{&placer_};
  std::unique_ptr<VariantRegistry> registry_;
  std::unique_ptr<CordonBook> cordons_;
  std::unique_ptr<ClaimBook> claims_;
  // Null with SQLite. Before the services: destroyed after them.
  std::unique_ptr<etcd::ReplicaSync> replica_sync_;
  absl::Duration node_ttl_;
  std::unique_ptr<Inventory> inventory_;
  // Before the services and the server: destroyed after them, so a queued
  // handler always finds its call's service.
  std::unique_ptr<WorkerPool> workers_;
  // With etcd: the inventory's observer, which shares the nodes through
  // etcd. After the inventory: its threads, which call the inventory, stop
  // first.
  std::unique_ptr<etcd::NodeSync> node_sync_;
  std::unique_ptr<CtxselService> ctxsel_service_;
  std::unique_ptr<VariantsService> variants_service_;
  std::unique_ptr<InventoryService> inventory_service_;
  // Before server_: destroyed after it; stopped once it has shut down.
  std::unique_ptr<HeartbeatQueues> heartbeat_queues_;
  std::unique_ptr<PlacementService> placement_service_;
  std::unique_ptr<AdminService> admin_service_;
  // Null without ServerOptions::reflection.
  std::unique_ptr<ReflectionService> reflection_service_;
  std::unique_ptr<grpc::Server> server_;
  // After server_: destroyed first, so no connection reaches a stopped
  // server.
  std::unique_ptr<Listener> listener_;
  // Before the inventory and claims its scrapes read: destroyed after them
  // would let a scrape read freed state.
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
  int port_ = 0;
  // Where ProbeNewConnection() connects: "host:port".
  std::string probe_address_;
  bool tls_ = false;
  // Guards server_'s start and shut_down_ against store health flips.
  absl::Mutex health_mu_;
  bool store_available_ ABSL_GUARDED_BY(health_mu_) = true;
  bool shut_down_ ABSL_GUARDED_BY(health_mu_) = false;
  std::unique_ptr<Housekeeping> housekeeping_;
};

// Loads the tokens, opens the variant store, loads the claims, builds every
// part and starts listening on options.listen — with TLS on gRPC's own
// port, or with `insecure` through a Listener (SO_REUSEPORT off, so a port
// already taken is an error, not a second listener; descriptor headroom;
// docs/security.md says why TLS cannot use it) — with health checking,
// reflection when asked, the message size and connection limits of
// `options`, and
// only identity (uncompressed) requests, and with
// ServerOptions::metrics_listen the metrics endpoint; the housekeeping
// thread then runs until the server is destroyed. Errors: the store's own
// (a corrupt or unreadable store keeps its code, e.g. DATA_LOSS, or
// FAILED_PRECONDITION for a data directory in use by another server; the
// message starts "cannot open the variant store", "cannot load the variant
// store", "cannot load the claims", or with etcd "cannot follow the etcd
// store" or "cannot follow the nodes in etcd"), InvalidArgumentError for an
// address
// that does not parse or for neither TLS files nor `insecure`, the tokens
// file's and PEM files' errors (with etcd, LoadEtcdSecurity's; then a failed
// TLS handshake with etcd is UNAVAILABLE and a refused etcd login
// INVALID_ARGUMENT, within "cannot open the variant store"), UnavailableError
// ("cannot listen on ...") when it cannot be bound (both name metrics_listen
// for the metrics address). Logs one line for the loaded store, one for the
// claims, with etcd one for the revision it follows from, and one for each
// address.
absl::StatusOr<std::unique_ptr<RunningServer>> BuildServer(
    const ServerOptions& options);

// Raises the soft RLIMIT_NOFILE to the hard limit, so idle connections
// exhaust descriptors as late as the system allows. Returns the limit now in
// effect.
absl::StatusOr<int64_t> RaiseOpenFileLimit();

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MAIN_SERVER_SETUP_H_
