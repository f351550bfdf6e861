// ctxsel-server: serves ctxsel.v1 with gRPC health checking and reflection.
//
//   ctxsel-server --listen=127.0.0.1:7070
//   ctxsel-server --listen=127.0.0.1:0 --port_file=/tmp/port   # any free port
//
// SIGTERM or SIGINT stops it gracefully: in-flight calls get a grace period.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "server/ctxsel_service.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "Address to serve on, host:port; port 0 picks a free port.");
ABSL_FLAG(std::string, port_file, "",
          "If set, the bound port is written to this file once serving.");
ABSL_FLAG(int, shutdown_grace_ms, 2000,
          "How long in-flight calls may run after SIGTERM/SIGINT.");

namespace {

// Blocks SIGTERM/SIGINT in every thread (call before starting any) so that
// only WaitForStopSignal() receives them.
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

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Serves the ctxsel.v1 API.");
  absl::ParseCommandLine(argc, argv);
  // Logs go to stderr; stdout stays free for anything a wrapper may parse.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ctxsel-server"));
  const sigset_t stop_signals = BlockStopSignals();

  ctxsel::server::CtxselService service;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  // gRPC defaults to SO_REUSEPORT, which lets a second server bind a busy
  // port silently; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int port = 0;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("cannot listen on {} (address in use or invalid)", listen);
    return 1;
  }
  spdlog::info("ctxsel-server {} listening on {} (port {})",
               ctxsel::server::kServerVersion, listen, port);
  const std::string port_file = absl::GetFlag(FLAGS_port_file);
  if (!port_file.empty() && !WritePortFile(port_file, port)) {
    spdlog::error("cannot write --port_file {}", port_file);
    server->Shutdown();
    return 1;
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("received signal {}, shutting down", signal_number);
  server->GetHealthCheckService()->SetServingStatus(false);
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(
                       absl::GetFlag(FLAGS_shutdown_grace_ms)));
  server->Wait();
  spdlog::info("stopped");
  return 0;
}
