// ctxsel-server: serves ctxsel.v1 with gRPC health checking and reflection.
//
//   ctxsel-server --listen=127.0.0.1:7070 --data_dir=/var/lib/ctxsel
//   ctxsel-server --listen=127.0.0.1:0 --port_file=/tmp/port   # any free port
//
// Variants are durable in --data_dir (SQLite, see server/sqlite_store.h);
// the inventory is soft state rebuilt from agent reports. SIGTERM or SIGINT
// stops it gracefully: in-flight calls get a grace period.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/ctxsel_service.h"
#include "server/housekeeping.h"
#include "server/inventory.h"
#include "server/inventory_service.h"
#include "server/placement/placer.h"
#include "server/placement_service.h"
#include "server/placer_bridge.h"
#include "server/sqlite_store.h"
#include "server/variant_registry.h"
#include "server/variants_service.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "Address to serve on, host:port; port 0 picks a free port.");
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound port is written to this file once serving.");
ABSL_FLAG(int, shutdown_grace_ms, 2000,
          "How long in-flight calls may run after SIGTERM/SIGINT.");
ABSL_FLAG(std::string, data_dir, "",
          "Directory of the durable variant store (created if missing). "
          "Empty: a fresh temporary directory, lost at exit.");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(1),
          "How often agents are told to send a heartbeat.");
ABSL_FLAG(absl::Duration, node_ttl, absl::ZeroDuration(),
          "A node with no heartbeat for this long expires with its devices; "
          "0: 3 x --heartbeat_interval.");
ABSL_FLAG(int, max_message_bytes, 4 << 20,
          "Largest request or response message, in bytes.");
ABSL_FLAG(int, max_batch_size, 1000,
          "Most variants in one RegisterVariants call.");

namespace {

// Blocks SIGTERM/SIGINT in every thread (call before starting any) so that
// only sigwait() in main receives them.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out.flush()) return false;
  }
  // Rename so a reader never sees a half-written file.
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string DataDir() {
  std::string dir = absl::GetFlag(FLAGS_data_dir);
  if (!dir.empty()) return dir;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/ctxsel-server-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "";
  spdlog::warn("no --data_dir: variants are kept in {} for this run only",
               pattern);
  return pattern;
}

absl::Duration NodeTtl() {
  const absl::Duration ttl = absl::GetFlag(FLAGS_node_ttl);
  return ttl > absl::ZeroDuration()
             ? ttl
             : 3 * absl::GetFlag(FLAGS_heartbeat_interval);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Serves the ctxsel.v1 API.");
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil checks lock order on every Lock(), which shows in
  // profiles; the order is documented per class and covered by the tests,
  // which keep the check on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Logs go to stderr; stdout stays free for anything a wrapper may parse.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ctxsel-server"));
  const sigset_t stop_signals = BlockStopSignals();
  using namespace ctxsel::server;

  auto store = SqliteStore::Open(DataDir());
  if (!store.ok()) {
    spdlog::error("cannot open the variant store: {}",
                  store.status().ToString());
    return 1;
  }
  placement::Placer placer;
  PlacerBridge bridge(&placer);
  RegistryLimits limits;
  limits.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  auto registry = VariantRegistry::Open(store->get(), &bridge, limits);
  if (!registry.ok()) {
    spdlog::error("cannot load the variant store: {}",
                  registry.status().ToString());
    return 1;
  }
  spdlog::info("loaded {} kernel(s) at revision {} from {}",
               (*registry)->kernel_count(), (*registry)->revision(),
               (*store)->Describe());
  InventoryOptions inventory_options;
  inventory_options.ttl = NodeTtl();
  Inventory inventory(inventory_options, &bridge);

  InventoryServiceOptions service_options;
  service_options.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  service_options.server_instance =
      absl::StrFormat("%x-%d", absl::ToUnixNanos(absl::Now()), getpid());
  CtxselService ctxsel_service;
  VariantsService variants_service(registry->get());
  InventoryService inventory_service(&inventory, &placer, service_options);
  PlacementService placement_service(&placer);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC defaults to SO_REUSEPORT, which lets a second server bind a busy
  // port silently; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_max_message_bytes));
  builder.SetMaxSendMessageSize(absl::GetFlag(FLAGS_max_message_bytes));
  int port = 0;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&ctxsel_service);
  builder.RegisterService(&variants_service);
  builder.RegisterService(&inventory_service);
  builder.RegisterService(&placement_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("cannot listen on {} (address in use or invalid)", listen);
    return 1;
  }
  spdlog::info("ctxsel-server {} listening on {} (port {}), node TTL {}",
               kServerVersion, listen, port,
               absl::FormatDuration(inventory_options.ttl));
  const std::string port_file = absl::GetFlag(FLAGS_port_file);
  if (!port_file.empty() && !WritePortFile(port_file, port)) {
    spdlog::error("cannot write --port_file {}", port_file);
    server->Shutdown();
    return 1;
  }
  Housekeeping housekeeping(&inventory);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("received signal {}, shutting down", signal_number);
  server->GetHealthCheckService()->SetServingStatus(false);
  server->Shutdown(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(absl::GetFlag(FLAGS_shutdown_grace_ms)));
  server->Wait();
  spdlog::info("stopped");
  return 0;
}
