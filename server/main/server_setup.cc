#include "server/main/server_setup.h"

#include <grpc/compression.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/flag_file.h"
#include "base/host_port.h"
#include "base/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/store/metered_store.h"
#include "server/store/sqlite_store.h"
#include "server/store/store_health.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

// `dir`, or a fresh temporary directory when it is empty.
absl::StatusOr<std::string> DataDir(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/ctxsel-server-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a temporary data directory ", pattern, ": ",
                     std::strerror(errno)));
  }
  spdlog::warn("no --data_dir: variants are kept in {} for this run only",
               pattern);
  return pattern;
}

// Changes at every start, so agents can tell a restarted server.
std::string ServerInstance() {
  return absl::StrFormat("%x-%d", absl::ToUnixNanos(absl::Now()), getpid());
}

// gRPC takes durations as int milliseconds; zero means "no limit" here and
// INT_MAX there.
int Milliseconds(absl::Duration d) {
  if (d <= absl::ZeroDuration() || d >= absl::Milliseconds(INT_MAX)) {
    return INT_MAX;
  }
  return static_cast<int>(absl::ToInt64Milliseconds(d));
}

// The lowest memory.max (cgroup v2) on this process's cgroup path; 0 when
// none is set or cgroup v2 is not mounted.
int64_t CgroupMemoryLimit() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  std::string path;
  while (std::getline(cgroups, line)) {
    if (absl::StartsWith(line, "0::")) path = line.substr(3);  // cgroup v2
  }
  if (path.empty()) return 0;
  int64_t lowest = 0;
  while (true) {
    std::ifstream max("/sys/fs/cgroup" + path + "/memory.max");
    int64_t bytes = 0;
    if (std::string text; max >> text && absl::SimpleAtoi(text, &bytes) &&
                          bytes > 0 && (lowest == 0 || bytes < lowest)) {
      lowest = bytes;
    }
    if (path.empty() || path == "/") break;
    path = path.substr(0, path.rfind('/'));
  }
  return lowest;
}

void SetConnectionLimits(const ServerOptions& options,
                         grpc::ServerBuilder& builder) {
  grpc::ResourceQuota quota("ctxsel-server");
  if (options.max_grpc_memory_bytes > 0) {
    quota.Resize(options.max_grpc_memory_bytes);
    spdlog::info("gRPC buffers: at most {} MiB (--max_grpc_memory_bytes)",
                 options.max_grpc_memory_bytes >> 20);
  } else {
    spdlog::warn(
        "--max_grpc_memory_bytes=0: gRPC's buffers are unbounded; half-sent "
        "requests from anyone can take all memory (docs/security.md)");
  }
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // Only identity requests: a small gzip request could otherwise inflate to
  // the message limit (and gRPC 1.51 inflates before it checks the size).
  // Clients sending compressed requests get UNIMPLEMENTED.
  builder.AddChannelArgument(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET,
                             1 << GRPC_COMPRESS_NONE);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             Milliseconds(options.max_connection_idle));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                             Milliseconds(options.max_connection_age));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             Milliseconds(options.max_connection_age_grace));
  if (options.max_concurrent_streams > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               options.max_concurrent_streams);
  }
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE,
                             options.max_header_list_bytes);
  // A client pinging more often than every 5 minutes without data, three
  // times, is sent GOAWAY (gRPC's defaults, stated so they stay).
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5 * 60 * 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TlsCredentials(
    const ServerOptions& options) {
  CTXSEL_ASSIGN_OR_RETURN(std::string cert,
                          ReadFlagFile("tls_cert", options.tls_cert));
  CTXSEL_ASSIGN_OR_RETURN(std::string key,
                          ReadFlagFile("tls_key", options.tls_key));
  // Client certificates are asked for and verified when offered, not
  // required: launchers and readers come with a token instead.
  grpc::SslServerCredentialsOptions ssl(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({key, cert});
  if (!options.client_ca.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(std::string ca,
                            ReadFlagFile("client_ca", options.client_ca));
    ssl.pem_root_certs = ca;
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::Status CheckSecurityOptions(const ServerOptions& options) {
  const bool tls = !options.tls_cert.empty() || !options.tls_key.empty();
  if (tls && (options.tls_cert.empty() || options.tls_key.empty())) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: give both or neither");
  }
  if (tls && options.insecure) {
    return absl::InvalidArgumentError(
        "--insecure: not with --tls_cert/--tls_key");
  }
  if (!tls && !options.insecure) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: required (or --insecure for plaintext; "
        "see docs/security.md)");
  }
  if (!tls && !options.client_ca.empty()) {
    return absl::InvalidArgumentError("--client_ca: needs --tls_cert");
  }
  // The front is known by its verified certificate, nothing weaker.
  if (!options.front_identity.empty() && options.client_ca.empty()) {
    return absl::InvalidArgumentError("--front_identity: needs --client_ca");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<etcd::EtcdSecurity> LoadEtcdSecurity(
    const ServerOptions& options) {
  struct File {
    const char* flag;
    const std::string* path;
    std::string* into;
  };
  etcd::EtcdSecurity security;
  std::string password;
  const File files[] = {
      {"etcd_ca", &options.etcd_ca, &security.ca_pem},
      {"etcd_cert", &options.etcd_cert, &security.cert_pem},
      {"etcd_key", &options.etcd_key, &security.key_pem},
      {"etcd_password_file", &options.etcd_password_file, &password},
  };
  for (const File& file : files) {
    if (file.path->empty()) continue;
    if (options.store.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", file.flag, ": only with --store=etcd://HOST:PORT"));
    }
    CTXSEL_ASSIGN_OR_RETURN(*file.into,
                            file.into == &password
                                ? ReadFlagFile(file.flag, *file.path)
                                : ReadPemFlagFile(file.flag, *file.path));
  }
  if (!options.etcd_user.empty() && options.store.empty()) {
    return absl::InvalidArgumentError(
        "--etcd_user: only with --store=etcd://HOST:PORT");
  }
  security.user = options.etcd_user;
  // The first line, as a token file's; never echoed in an error.
  security.password = std::string(
      absl::StripAsciiWhitespace(password.substr(0, password.find('\n'))));
  if (!options.etcd_password_file.empty() && security.password.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--etcd_password_file: ", options.etcd_password_file, " is empty"));
  }
  CTXSEL_RETURN_IF_ERROR(etcd::CheckEtcdSecurity(security));
  return security;
}

// The ctxsel.v1 services, each reported on its own in gRPC health checks;
// those that write the store report NOT_SERVING while it takes no writes.
struct HealthService {
  const char* name;
  bool needs_store;
};
const HealthService kHealthServices[] = {
    {v1::Ctxsel::service_full_name(), false},
    {v1::Variants::service_full_name(), true},
    {v1::Inventory::service_full_name(), false},
    {v1::Placement::service_full_name(), true},
    {v1::Admin::service_full_name(), true},
};

void RunningServer::SetStoreServing(bool available) {
  absl::MutexLock lock(&health_mu_);
  store_available_ = available;
  PublishHealth();
}

void RunningServer::PublishHealth() {
  if (server_ == nullptr || shut_down_) return;
  for (const HealthService& service : kHealthServices) {
    server_->GetHealthCheckService()->SetServingStatus(
        service.name, !service.needs_store || store_available_);
  }
}

absl::Status RunningServer::OpenVariants(const ServerOptions& options) {
  CTXSEL_ASSIGN_OR_RETURN(std::string dir, DataDir(options.data_dir));
  data_dir_ = dir;
  absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(options);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("cannot open the variant store: ",
                                     store.status().ToString()));
  }
  // The etcd store itself, before the wrappers hide it.
  etcd_store_ = dynamic_cast<etcd::EtcdStore*>(store->get());
  auto health =
      std::make_unique<StoreHealth>(*std::move(store), [this](bool available) {
        spdlog::log(available ? spdlog::level::info : spdlog::level::warn,
                    "the variant store {} writes: {}",
                    available ? "takes" : "refuses",
                    available ? "serving again" : "store services NOT_SERVING");
        SetStoreServing(available);
      });
  store_health_ = health.get();
  store_ = std::move(health);
  if (metrics_ != nullptr) {
    store_ = std::make_unique<MeteredStore>(std::move(store_), metrics_.get());
  }
  RegistryLimits limits;
  limits.max_batch_size = options.max_batch_size;
  absl::StatusOr<std::unique_ptr<VariantRegistry>> registry =
      VariantRegistry::Open(store_.get(), &bridge_, limits);
  if (!registry.ok()) {
    return absl::Status(registry.status().code(),
                        absl::StrCat("cannot load the variant store: ",
                                     registry.status().ToString()));
  }
  registry_ = *std::move(registry);
  spdlog::info("loaded {} kernel(s) at revision {} from {}",
               registry_->kernel_count(), registry_->revision(),
               store_->Describe());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Store>> RunningServer::OpenStore(
    const ServerOptions& options) {
  if (!options.store.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(std::vector<std::string> endpoints,
                            etcd::ParseEtcdUrl(options.store, "store"));
    etcd::EtcdClientOptions client_options;
    CTXSEL_ASSIGN_OR_RETURN(client_options.security, LoadEtcdSecurity(options));
    CTXSEL_ASSIGN_OR_RETURN(
        std::unique_ptr<etcd::EtcdStore> store,
        etcd::EtcdStore::Open(endpoints, options.store_prefix, client_options));
    return std::unique_ptr<Store>(std::move(store));
  }
  SqliteStoreOptions store_options;
  store_options.max_bytes = options.max_store_bytes;
  store_options.restore_from = options.restore_from;
  CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store,
                          SqliteStore::Open(data_dir_, store_options));
  return std::unique_ptr<Store>(std::move(store));
}

absl::Status RunningServer::StartReplicaSync() {
  if (etcd_store_ == nullptr) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<etcd::ReplicaSync>> sync =
      etcd::ReplicaSync::Start(etcd_store_, registry_.get(), claims_.get());
  if (!sync.ok()) {
    return absl::Status(sync.status().code(),
                        absl::StrCat("cannot follow the etcd store: ",
                                     sync.status().ToString()));
  }
  replica_sync_ = *std::move(sync);
  spdlog::info("following {} from revision {}", etcd_store_->Describe(),
               etcd_store_->loaded_revision() + 1);
  return absl::OkStatus();
}

constexpr char RunningServer::kStoreHealthService[];

bool RunningServer::store_stale() const {
  return replica_sync_ != nullptr && replica_sync_->stale();
}

absl::Status RunningServer::OpenClaims() {
  cordons_ = std::make_unique<CordonBook>(store_.get(), &placer_);
  if (absl::Status s = cordons_->Reload(); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat("cannot load the cordons: ", s.ToString()));
  }
  ClaimOptions options;
  // The caps of the tokens file (docs/security.md, "Claim quotas"), read
  // on each claim so that a SIGHUP's reload applies to the next one.
  options.quotas = [authorizer = authorizer_.get()](const std::string& owner,
                                                    const std::string& holder) {
    std::vector<ClaimQuota> quotas;
    const std::shared_ptr<const TokenTable> tokens = authorizer->tokens();
    if (auto it = tokens->principal_limits.find(owner);
        !owner.empty() && it != tokens->principal_limits.end()) {
      quotas.push_back(
          {owner, "", it->second.max_claims, it->second.max_device_hours});
    }
    for (const auto& [prefix, limits] : tokens->holder_limits) {
      if (absl::StartsWith(holder, prefix)) {
        quotas.push_back(
            {"", prefix, limits.max_claims, limits.max_device_hours});
      }
    }
    return quotas;
  };
  CordonBook* cordons = cordons_.get();
  options.may_renew = [cordons](const Claim& claim) {
    return cordons->CheckRenewal(claim.device, claim.node);
  };
  absl::StatusOr<std::unique_ptr<ClaimBook>> claims =
      ClaimBook::Open(store_.get(), std::move(options));
  if (!claims.ok()) {
    return absl::Status(
        claims.status().code(),
        absl::StrCat("cannot load the claims: ", claims.status().ToString()));
  }
  claims_ = *std::move(claims);
  spdlog::info("loaded {} live claim(s)", claims_->List("").size());
  return absl::OkStatus();
}

void RunningServer::MakeServices(const ServerOptions& options) {
  InventoryOptions inventory_options;
  inventory_options.ttl = node_ttl_;
  inventory_options.suspect_after = EffectiveSuspectAfter(options);
  inventory_options.report_limits = options.report_limits;
  InventoryObserver* observer = nullptr;
  if (etcd_store_ != nullptr) {
    etcd::NodeSyncOptions sync_options;
    sync_options.lease_ttl = etcd::NodeLeaseTtl(node_ttl_);
    sync_options.tick = options.heartbeat_interval;
    sync_options.utilisation_delta = options.store_utilisation_delta;
    sync_options.utilisation_interval = options.store_utilisation_interval;
    node_sync_ =
        std::make_unique<etcd::NodeSync>(etcd_store_, &bridge_, sync_options);
    observer = node_sync_.get();
  }
  inventory_ =
      std::make_unique<Inventory>(inventory_options, &bridge_, observer);
  Inventory* inventory = inventory_.get();
  cordons_->OnChange([inventory](const std::vector<std::string>& nodes) {
    inventory->NodesChanged(nodes, "cordons changed");
  });
  InventoryServiceOptions service_options;
  service_options.heartbeat_interval = options.heartbeat_interval;
  service_options.server_instance = ServerInstance();
  service_options.page_bytes = PageBytes(options.max_message_bytes);
  service_options.metrics = metrics_.get();
  service_options.store_stale = [this] { return store_stale(); };
  const Authorizer* authorizer = authorizer_.get();
  workers_ = std::make_unique<WorkerPool>(WorkerPoolOptions{
      .threads = options.max_threads, .max_queued = 16 * options.max_threads});
  ctxsel_service_ = std::make_unique<CtxselService>(authorizer);
  variants_service_ = std::make_unique<VariantsService>(
      authorizer, registry_.get(), workers_.get(),
      PageBytes(options.max_message_bytes));
  placement_service_ = std::make_unique<PlacementService>(
      authorizer, &placer_, claims_.get(), workers_.get(), metrics_.get(),
      [this] { return store_stale(); });
  inventory_service_ = std::make_unique<InventoryService>(
      authorizer, inventory_.get(), &placer_, service_options);
  admin_service_ = std::make_unique<AdminService>(
      authorizer, store_.get(), workers_.get(), data_dir_, cordons_.get());
  if (options.reflection) {
    std::vector<std::string> services = {
        "grpc.health.v1.Health",
        reflection::ServerReflection::service_full_name()};
    for (const HealthService& service : kHealthServices) {
      services.push_back(service.name);
    }
    reflection_service_ =
        std::make_unique<ReflectionService>(authorizer, std::move(services));
  }
}

absl::Status RunningServer::ListenTls(const ServerOptions& options,
                                      grpc::ServerBuilder& builder) {
  CTXSEL_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                          TlsCredentials(options));
  // gRPC's own port: gRPC 1.51 can take an accepted descriptor only as a
  // plaintext channel (grpc_server_add_channel_from_fd), so TLS gives up
  // the Listener's survival of EMFILE; the raised RLIMIT_NOFILE and the
  // connection limits remain, and the self-probe exits for a restart when
  // connections are no longer accepted (docs/security.md, "TLS and
  // descriptors").
  builder.AddListeningPort(options.listen, credentials, &port_);
  return absl::OkStatus();
}

namespace {

// Where a probe reaches `listen` ("host:port" with the bound `port`): its
// own host, or loopback when it names every address.
std::string ProbeAddress(const std::string& listen, int port) {
  absl::StatusOr<HostPort> split = ParseHostPort(listen);
  std::string host = split.ok() ? split->host : "";
  if (host.empty() || host == "*" || host == "0.0.0.0" || host == "::") {
    host = "127.0.0.1";
  }
  if (absl::StrContains(host, ':')) host = absl::StrCat("[", host, "]");
  return absl::StrCat(host, ":", port);
}

}  // namespace

absl::Status RunningServer::ProbeNewConnection(absl::Duration timeout) const {
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (tls_) {
    grpc::experimental::TlsChannelCredentialsOptions tls;
    tls.set_verify_server_certs(false);
    tls.set_check_call_host(false);
    tls.set_certificate_verifier(
        std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
    credentials = grpc::experimental::TlsCredentials(tls);
  }
  grpc::ChannelArguments args;
  // A connection of its own: no subchannel shared with an earlier probe.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(probe_address_, credentials, args);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = grpc::health::v1::Health::NewStub(channel)->Check(
      &context, request, &response);
  if (status.ok()) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat(probe_address_, ": ", status.error_message(), " (",
                   static_cast<int>(status.error_code()), ")"));
}

absl::Status RunningServer::Listen(const ServerOptions& options) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  if (options.insecure) {
    // The Listener accepts connections, not gRPC: gRPC 1.51's listener
    // stops for good after running out of descriptors once.
    ListenerOptions listener_options;
    listener_options.fd_headroom = options.fd_headroom;
    CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<Listener> listener,
                            Listener::Bind(options.listen, listener_options));
    listener_ = std::move(listener);
    port_ = listener_->port();
  } else {
    CTXSEL_RETURN_IF_ERROR(ListenTls(options, builder));
  }
  SetConnectionLimits(options, builder);
  if (metrics_ != nullptr) {
    builder.experimental().SetInterceptorCreators(
        MakeRpcInterceptorFactories(metrics_.get()));
  }
  builder.RegisterService(ctxsel_service_.get());
  builder.RegisterService(variants_service_.get());
  builder.RegisterService(inventory_service_.get());
  heartbeat_queues_ = inventory_service_->MakeHeartbeatQueues(
      options.heartbeat_queues > 0 ? options.heartbeat_queues
                                   : DefaultHeartbeatQueues(static_cast<int>(
                                         std::thread::hardware_concurrency())));
  heartbeat_queues_->AddTo(builder);
  builder.RegisterService(placement_service_.get());
  builder.RegisterService(admin_service_.get());
  if (reflection_service_ != nullptr) {
    builder.RegisterService(reflection_service_.get());
  }
  {
    absl::MutexLock lock(&health_mu_);
    server_ = builder.BuildAndStart();
    if (server_ != nullptr) heartbeat_queues_->Start();
    if (server_ != nullptr && port_ != 0) PublishHealth();
  }
  tls_ = listener_ == nullptr;
  probe_address_ = ProbeAddress(options.listen, port_);
  if (server_ == nullptr || port_ == 0) {
    return listener_ != nullptr
               ? absl::InternalError("gRPC could not start the server")
               : absl::UnavailableError(
                     absl::StrCat("cannot listen on ", options.listen));
  }
  if (listener_ != nullptr) {
    listener_->Start(server_.get());
    spdlog::warn(
        "--insecure: plaintext on {}; anyone who can reach it can read and "
        "forge calls (docs/security.md)",
        options.listen);
  }
  spdlog::info("ctxsel-server {} listening on {} (port {}, {}), node TTL {}",
               kServerVersion, options.listen, port_,
               listener_ != nullptr
                   ? "plaintext"
                   : (options.client_ca.empty() ? "TLS" : "TLS, mTLS"),
               absl::FormatDuration(node_ttl_));
  return absl::OkStatus();
}

absl::Status RunningServer::ServeMetrics(const ServerOptions& options) {
  metrics_->SetFleetSource([this] {
    FleetCounts counts;
    int64_t sequence = 0;
    for (const NodeState& node : inventory_->Nodes(&sequence)) {
      const auto devices = static_cast<int64_t>(node.devices.size());
      (node.suspect ? counts.suspect_nodes : counts.healthy_nodes) += 1;
      (node.suspect ? counts.suspect_devices : counts.healthy_devices) +=
          devices;
      for (const Device& d : node.devices) {
        const DeviceCondition& c = d.condition;
        counts.degraded_devices += c.health == DeviceHealth::kDegraded;
        counts.unhealthy_devices += c.health == DeviceHealth::kUnhealthy;
        counts.cordoned_devices += c.cordoned;
        counts.draining_devices += c.draining;
      }
    }
    counts.active_claims = static_cast<int64_t>(claims_->List("").size());
    counts.expired_claims = claims_->expired_count();
    counts.claim_waiters = claims_->waiter_count();
    const placement::Placer::CacheStats cache = placer_.cache_stats();
    counts.resolution_hits = cache.hits;
    counts.resolution_misses = cache.misses;
    counts.resolution_rebuilds = cache.rebuilds;
    counts.resolution_rebuild_seconds =
        absl::ToDoubleSeconds(cache.rebuild_time);
    return counts;
  });
  CTXSEL_ASSIGN_OR_RETURN(
      std::unique_ptr<MetricsEndpoint> endpoint,
      MetricsEndpoint::Start(options.metrics_listen, metrics_->collectables()));
  metrics_endpoint_ = std::move(endpoint);
  if (!IsLoopbackAddress(options.metrics_listen)) {
    spdlog::warn(
        "metrics on {}, not loopback: anyone who can reach it reads them "
        "without credentials (docs/operations.md, \"Metrics\")",
        options.metrics_listen);
  }
  spdlog::info("metrics on http://{}/metrics (port {})", options.metrics_listen,
               metrics_endpoint_->port());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RunningServer>> BuildServer(
    const ServerOptions& options) {
  CTXSEL_RETURN_IF_ERROR(CheckSecurityOptions(options));
  std::unique_ptr<RunningServer> server(new RunningServer);
  AuthOptions auth;
  auth.required = !options.insecure || !options.tokens_file.empty();
  auth.tokens_file = options.tokens_file;
  auth.revoked_certs = options.revoked_certs;
  auth.limits = options.principal_limits;
  auth.front_identity = options.front_identity;
  server->authorizer_ = std::make_unique<Authorizer>(auth);
  CTXSEL_RETURN_IF_ERROR(server->authorizer_->Load().status());
  if (!auth.required) {
    spdlog::warn("--insecure without --tokens_file: every call is allowed");
  }
  if (!options.metrics_listen.empty()) {
    // Checked before the store opens, so a typo costs no startup work.
    CTXSEL_RETURN_IF_ERROR(ValidateMetricsAddress(options.metrics_listen));
    server->metrics_ = std::make_unique<Metrics>();
  }
  server->node_ttl_ = EffectiveNodeTtl(options);
  CTXSEL_RETURN_IF_ERROR(server->OpenVariants(options));
  CTXSEL_RETURN_IF_ERROR(server->OpenClaims());
  CTXSEL_RETURN_IF_ERROR(server->StartReplicaSync());
  server->MakeServices(options);
  if (server->node_sync_ != nullptr) {
    if (absl::Status s = server->node_sync_->Start(server->inventory_.get());
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot follow the nodes in "
                                                 "etcd: ",
                                                 s.ToString()));
    }
  }
  CTXSEL_RETURN_IF_ERROR(server->Listen(options));
  if (server->metrics_ != nullptr) {
    CTXSEL_RETURN_IF_ERROR(server->ServeMetrics(options));
  }
  if (server->replica_sync_ != nullptr) {
    // Health's "ctxsel.store" service: NOT_SERVING while etcd is away (the
    // server as a whole, "", keeps answering reads).
    grpc::HealthCheckServiceInterface* health =
        server->server_->GetHealthCheckService();
    // Stale: the writing services NOT_SERVING at once. Back in step: etcd
    // takes writes again, so they serve again without waiting for a write
    // to prove it (none may come while load balancers keep claims away
    // from a NOT_SERVING Placement).
    StoreHealth* store_health = server->store_health_;
    server->replica_sync_->OnStaleChanged([health, store_health](bool stale) {
      health->SetServingStatus(RunningServer::kStoreHealthService, !stale);
      if (stale) {
        store_health->Unreachable();
      } else {
        store_health->Reachable();
      }
    });
  }
  // No node expires while the replica is stale or its watch of the nodes
  // is not back yet: another replica may hold one of them by now.
  server->housekeeping_ = std::make_unique<Housekeeping>(
      server->inventory_.get(), server->claims_.get(), server->metrics_.get(),
      server->cordons_.get(), [s = server.get()] {
        return s->store_stale() ||
               (s->node_sync_ != nullptr && !s->node_sync_->following());
      });
  return server;
}

RunningServer::~RunningServer() {
  housekeeping_.reset();
  bool running = false;
  {
    absl::MutexLock lock(&health_mu_);
    running = server_ != nullptr && !shut_down_;
  }
  if (running) Shutdown(absl::ZeroDuration());
}

void RunningServer::Shutdown(absl::Duration grace) {
  {
    absl::MutexLock lock(&health_mu_);
    shut_down_ = true;
    // Every service NOT_SERVING, and no later store flip changes that.
    server_->GetHealthCheckService()->Shutdown();
  }
  if (listener_ != nullptr) listener_->Stop();
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(grace));
  server_->Wait();
  heartbeat_queues_->Stop();
}

absl::Duration EffectiveNodeTtl(const ServerOptions& options) {
  return options.node_ttl > absl::ZeroDuration()
             ? options.node_ttl
             : 3 * options.heartbeat_interval;
}

absl::Duration EffectiveSuspectAfter(const ServerOptions& options) {
  return options.suspect_after > absl::ZeroDuration()
             ? options.suspect_after
             : 2 * options.heartbeat_interval;
}

int64_t GrpcMemoryBudget(int64_t physical_bytes, int64_t cgroup_limit_bytes) {
  int64_t usable = physical_bytes;
  if (cgroup_limit_bytes > 0 && cgroup_limit_bytes < usable) {
    usable = cgroup_limit_bytes;
  }
  return std::min<int64_t>(int64_t{1} << 30, usable / 4);
}

int64_t DefaultGrpcMemoryBytes() {
  const int64_t physical =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return GrpcMemoryBudget(physical, CgroupMemoryLimit());
}

absl::StatusOr<int64_t> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(
        absl::StrCat("getrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
  }
  if (limit.rlim_cur != limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return absl::InternalError(
          absl::StrCat("setrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
    }
  }
  return limit.rlim_cur == RLIM_INFINITY ? INT64_MAX
                                         : static_cast<int64_t>(limit.rlim_cur);
}

}  // namespace ctxsel::server
