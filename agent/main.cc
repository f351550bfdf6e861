// ctxsel-agent: finds this node's devices and keeps the ctxsel server's
// inventory of them true.
//
//   ctxsel-agent --print                 # what this machine has, then exit
//   ctxsel-agent --print --json
//   ctxsel-agent --server=ctxsel:7070 --node_id=n7 --heartbeat=5s
//       --ca=ca.pem --tls_cert=n7.pem --tls_key=n7.key
//   ctxsel-agent --backends= --devices_file=fleet/n7.json   # a simulated node
//
// SIGTERM or SIGINT deregisters the node and exits.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/agent_metrics.h"
#include "agent/device_text.h"
#include "agent/discovery.h"
#include "agent/grpc_transport.h"
#include "agent/reporter.h"
#include "base/channel_credentials.h"
#include "base/flags_usage.h"
#include "base/metrics_endpoint.h"
#include "base/port_file.h"
#include "base/server_target.h"
#include "base/version.h"
#include "devices/device_json.h"
#include "devices/node_id.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, server, ctxsel::kDefaultServer,
          "The ctxsel server, host:port; a DNS name or a list "
          "(a:7070,b:7070) of replicas fails over between them.");
ABSL_FLAG(std::string, node_id, "", "This node's id; empty: the host name.");
ABSL_FLAG(absl::Duration, heartbeat, absl::Seconds(5),
          "Heartbeat interval (the server may ask for a shorter one).");
ABSL_FLAG(bool, print, false, "Print the devices found and exit.");
ABSL_FLAG(bool, json, false,
          "With --print: as JSON (the devices file schema).");
ABSL_FLAG(std::string, backends, "cpu,nvml,kfd,drm",
          "Discovery backends to run, comma-separated (empty: none).");
ABSL_FLAG(std::string, sysfs_root, "/",
          "Directory standing for / when reading /sys (tests use fixtures).");
ABSL_FLAG(
    std::string, devices_file, "",
    "JSON file of extra or simulated devices (see devices/device_json.h); "
    "read again every heartbeat.");
ABSL_FLAG(std::string, metrics_listen, "",
          "Address of the Prometheus /metrics endpoint, host:port (port 0 "
          "picks a free port), e.g. 127.0.0.1:9465. Unauthenticated: keep it "
          "on loopback or a management network. Empty: no metrics.");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, the bound metrics port is written to this file.");
// How the agent proves its identity: a client certificate naming its node,
// or a token of role agent. $CTXSEL_CA fills --ca; $CTXSEL_TOKEN_FILE is a
// person's, so the agent never reads it (base/channel_credentials.h).
ABSL_FLAG(bool, insecure, false,
          "Talk plaintext to a server started with --insecure (no TLS).");
ABSL_FLAG(std::string, ca, "",
          "PEM CA that signed the server's certificate (default: "
          "$CTXSEL_CA, else the system's roots).");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate naming this node (mTLS), with --tls_key.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, token_file, "",
          "File holding a bearer token of role agent (not read from the "
          "environment).");
ABSL_FLAG(std::string, nvml_library, ctxsel::agent::kNvmlLibrary,
          "NVML library to dlopen for NVIDIA GPUs.");
ABSL_FLAG(absl::Duration, xid_hold, ctxsel::agent::NvmlOptions().xid_hold,
          "How long an NVIDIA GPU stays unhealthy after its last critical "
          "Xid error.");

namespace {

std::string AgentVersion() {
  return absl::StrCat("ctxsel-agent ", ctxsel::kVersion);
}

absl::StatusOr<ctxsel::agent::Discovery> MakeDiscovery(
    const std::string& node) {
  ctxsel::agent::DiscoveryOptions options;
  options.backends = absl::StrSplit(absl::GetFlag(FLAGS_backends), ',',
                                    absl::SkipWhitespace());
  options.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
  options.devices_file = absl::GetFlag(FLAGS_devices_file);
  options.nvml_library = absl::GetFlag(FLAGS_nvml_library);
  options.xid_hold = absl::GetFlag(FLAGS_xid_hold);
  auto backends = ctxsel::agent::MakeBackends(options);
  if (!backends.ok()) return backends.status();
  return ctxsel::agent::Discovery(node, *std::move(backends));
}

int Print(ctxsel::agent::Discovery& discovery) {
  ctxsel::agent::Discovery::Result found = discovery.Run();
  for (const absl::Status& error : found.errors) {
    std::cerr << "error: " << error.message() << "\n";
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ctxsel::DevicesToJsonText(found.devices) << "\n";
  } else {
    std::cout << ctxsel::agent::DevicesToText(discovery.node(), found.devices);
  }
  return found.errors.empty() ? 0 : 1;
}

int Serve(ctxsel::agent::Discovery& discovery) {
  ctxsel::agent::AgentMetrics metrics;
  std::unique_ptr<ctxsel::MetricsEndpoint> endpoint;
  if (const std::string address = absl::GetFlag(FLAGS_metrics_listen);
      !address.empty()) {
    absl::StatusOr<std::unique_ptr<ctxsel::MetricsEndpoint>> started =
        ctxsel::MetricsEndpoint::Start(address, {metrics.registry()});
    if (!started.ok()) {
      spdlog::error("{}", std::string(started.status().message()));
      return 2;
    }
    endpoint = *std::move(started);
    spdlog::info("metrics on http://{}/metrics (port {})", address,
                 endpoint->port());
    const std::string port_file = absl::GetFlag(FLAGS_metrics_port_file);
    if (!port_file.empty()) {
      if (absl::Status s = ctxsel::WritePortFile(port_file, endpoint->port());
          !s.ok()) {
        spdlog::error("{}", std::string(s.message()));
        return 1;
      }
    }
  }
  const auto discover = [&] {
    const absl::Time start = absl::Now();
    ctxsel::agent::Discovery::Result found = discovery.Run();
    metrics.RecordDiscovery(absl::Now() - start);
    return found;
  };
  ctxsel::agent::Discovery::Result first = discover();
  for (const absl::Status& error : first.errors) {
    spdlog::error("discovery: {}", error.ToString());
  }
  if (!first.errors.empty()) return 1;
  // Signals go to the waiting thread only (block them before gRPC's threads).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::Duration heartbeat = absl::GetFlag(FLAGS_heartbeat);
  const std::string server = absl::GetFlag(FLAGS_server);
  ctxsel::ClientSecurity security;
  security.insecure = absl::GetFlag(FLAGS_insecure);
  security.ca_file = absl::GetFlag(FLAGS_ca);
  security.cert_file = absl::GetFlag(FLAGS_tls_cert);
  security.key_file = absl::GetFlag(FLAGS_tls_key);
  security.token_file = absl::GetFlag(FLAGS_token_file);
  ctxsel::FillFromEnvironment(security, ctxsel::EnvironmentToken::kIgnore);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ctxsel::MakeChannelCredentials(security);
  if (!credentials.ok()) {
    std::cerr << "ctxsel-agent: " << credentials.status().message() << "\n";
    return 2;
  }
  // A list of replicas is one channel per replica (with TLS verified against
  // its own name): the next one each time the transport drops its channel
  // (base/server_target.h), as when a stale replica refuses beats.
  ctxsel::ServerRotation servers(server);
  ctxsel::agent::GrpcInventoryTransport transport(
      [&] {
        // Under the transport's lock: ServerRotation needs no other.
        return ctxsel::agent::MakeAgentChannel(servers.Next(), *credentials,
                                               heartbeat);
      },
      AgentVersion(), /*rpc_timeout=*/absl::Seconds(5),
      ctxsel::agent::HeartbeatAnswerTimeout(heartbeat),
      static_cast<int>(ctxsel::ServerList(server).size()));
  ctxsel::RealClock clock;
  ctxsel::agent::Reporter::Options options;
  options.node = discovery.node();
  options.heartbeat = heartbeat;
  options.metrics = &metrics;
  ctxsel::agent::Reporter reporter(
      options,
      [&] {
        ctxsel::agent::Discovery::Result found = discover();
        for (const absl::Status& e : found.errors) {
          spdlog::warn("discovery: {}", e.ToString());
        }
        return found.devices;
      },
      transport, clock);
  std::thread waiter([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    spdlog::info("signal {}: deregistering and exiting", signal_number);
    reporter.Stop();
  });
  // The interval followed is logged once the server has named its own.
  spdlog::info("{} node {}: {} devices, server {}, --heartbeat={}",
               AgentVersion(), discovery.node(), first.devices.size(), server,
               absl::FormatDuration(heartbeat));
  absl::Status s = reporter.Run();
  waiter.join();
  if (!s.ok()) spdlog::warn("deregistration failed: {}", s.ToString());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Finds this node's devices and reports them to a ctxsel server.\n"
      "  ctxsel-agent --print [--json]\n"
      "  ctxsel-agent --server=HOST:PORT [--node_id=ID] [--heartbeat=5s]\n"
      "      --ca=CA.pem --tls_cert=NODE.pem --tls_key=NODE.key | --insecure");
  ctxsel::SetFlagsUsage("ctxsel-agent");
  ctxsel::ParseFlagsOrExit(argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("ctxsel-agent"));
  absl::StatusOr<ctxsel::agent::Discovery> discovery =
      MakeDiscovery(ctxsel::NodeId(absl::GetFlag(FLAGS_node_id)));
  if (!discovery.ok()) {
    std::cerr << "ctxsel-agent: " << discovery.status().message() << "\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_heartbeat) <= absl::ZeroDuration()) {
    std::cerr << "ctxsel-agent: --heartbeat must be positive\n";
    return 2;
  }
  return absl::GetFlag(FLAGS_print) ? Print(*discovery) : Serve(*discovery);
}
