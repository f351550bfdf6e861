#include "server/server_setup.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/sqlite_store.h"
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

}  // namespace

absl::Status RunningServer::OpenVariants(const ServerOptions& options) {
  absl::StatusOr<std::string> dir = DataDir(options.data_dir);
  if (!dir.ok()) return dir.status();
  data_dir_ = *dir;
  SqliteStoreOptions store_options;
  store_options.max_bytes = options.max_store_bytes;
  store_options.restore_from = options.restore_from;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(data_dir_, store_options);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("cannot open the variant store: ",
                                     store.status().ToString()));
  }
  store_ = *std::move(store);
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

absl::Status RunningServer::OpenClaims() {
  absl::StatusOr<std::unique_ptr<ClaimBook>> claims =
      ClaimBook::Open(store_.get());
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
  inventory_options.suspect_after = options.suspect_after > absl::ZeroDuration()
                                        ? options.suspect_after
                                        : 2 * options.heartbeat_interval;
  inventory_options.report_limits = options.report_limits;
  inventory_ = std::make_unique<Inventory>(inventory_options, &bridge_);
  InventoryServiceOptions service_options;
  service_options.heartbeat_interval = options.heartbeat_interval;
  service_options.server_instance = ServerInstance();
  variants_service_ = std::make_unique<VariantsService>(registry_.get());
  placement_service_ =
      std::make_unique<PlacementService>(&placer_, claims_.get());
  inventory_service_ = std::make_unique<InventoryService>(
      inventory_.get(), &placer_, service_options);
  admin_service_ = std::make_unique<AdminService>(store_.get(), data_dir_);
}

absl::Status RunningServer::Listen(const ServerOptions& options) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC defaults to SO_REUSEPORT, which lets a second server bind a busy
  // port silently; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &port_);
  builder.RegisterService(&ctxsel_service_);
  builder.RegisterService(variants_service_.get());
  builder.RegisterService(inventory_service_.get());
  builder.RegisterService(placement_service_.get());
  builder.RegisterService(admin_service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.listen, " (address in use or invalid)"));
  }
  spdlog::info("ctxsel-server {} listening on {} (port {}), node TTL {}",
               kServerVersion, options.listen, port_,
               absl::FormatDuration(node_ttl_));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RunningServer>> BuildServer(
    const ServerOptions& options) {
  std::unique_ptr<RunningServer> server(new RunningServer);
  server->node_ttl_ = options.node_ttl > absl::ZeroDuration()
                          ? options.node_ttl
                          : 3 * options.heartbeat_interval;
  if (absl::Status s = server->OpenVariants(options); !s.ok()) return s;
  if (absl::Status s = server->OpenClaims(); !s.ok()) return s;
  server->MakeServices(options);
  if (absl::Status s = server->Listen(options); !s.ok()) return s;
  server->housekeeping_ =
      std::make_unique<Housekeeping>(server->inventory_.get());
  return server;
}

RunningServer::~RunningServer() {
  housekeeping_.reset();
  if (server_ != nullptr && !shut_down_) Shutdown(absl::ZeroDuration());
}

void RunningServer::Shutdown(absl::Duration grace) {
  shut_down_ = true;
  server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(grace));
  server_->Wait();
}

absl::Status WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out.flush()) {
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path,
                                            ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
