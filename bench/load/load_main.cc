// ctxsel-load: drives a running ctxsel-server with a simulated fleet and
// concurrent Select clients, and prints throughput and latency percentiles
// for Select and for Ping (the no-op baseline) plus the server's memory.
//
//   ctxsel-load --server=127.0.0.1:7070 --nodes=2000 --select_clients=2
//       --duration=5s --server_pid=$(pidof ctxsel-server)
//
// Steps: register --kernels kernels of --variants variants (replacing any
// of the same names), report --nodes nodes and keep a heartbeat stream per
// node beating at the server's interval, wait one interval, run Ping for
// --duration, then Select for --duration, both with --select_clients
// client threads, then close the streams and deregister the nodes. With
// --agent_processes=N the agents are spread over N processes (forked first;
// counts are summed, beat latencies come from the first). It
// talks to loopback addresses only, is bounded in counts and time and
// stops by itself. Output: a readable report, or key=value lines with
// --format=kv (what tools/load.sh reads).
#include <grpcpp/grpcpp.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/grpc_status.h"
#include "base/server_target.h"
#include "bench/load/agent_fleet.h"
#include "bench/load/latency.h"
#include "bench/load/load_fleet.h"
#include "bench/load/proc_status.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"

ABSL_FLAG(std::string, server, ctxsel::kDefaultServer,
          "The server, host:port; the host must be a loopback address.");
ABSL_FLAG(int, nodes, 200, "Simulated agents (nodes), 1..20000.");
ABSL_FLAG(int, devices_per_node, 8,
          "Devices per node (host CPU + GPUs), 1..64.");
ABSL_FLAG(int, kernels, 16, "Kernels to register, 1..1000.");
ABSL_FLAG(int, variants, 16, "Variants per kernel, 1..64.");
ABSL_FLAG(int, select_clients, 2,
          "Concurrent Select (and Ping) clients, 1..64.");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(5),
          "Length of each phase (Ping, then Select), 100ms..120s.");
ABSL_FLAG(int, agent_channels, 0,
          "Connections the agents' streams share; 0: one per 90 agents (the "
          "server's --max_concurrent_streams defaults to 100 per connection; "
          "real agents hold one connection each).");
ABSL_FLAG(int, agent_processes, 1,
          "Processes the agents are spread over, 1..16. gRPC's completion "
          "queue checks every completed operation against all outstanding "
          "ones (Debian's libgrpc keeps that debug check), so one process "
          "with 10,000 streams spends much of its CPU there, CPU the server "
          "it measures shares; real agents hold one stream each.");
ABSL_FLAG(std::string, node_prefix, "load-n", "Names of the simulated nodes.");
ABSL_FLAG(int, server_pid, 0, "If set, report this process's RSS and threads.");
ABSL_FLAG(std::string, format, "text", "text or kv (key=value lines).");

namespace ctxsel::load {
namespace {

struct Limits {
  const char* flag;
  int64_t value, min, max;
};

absl::Status CheckFlags() {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (!absl::StartsWith(server, "127.") &&
      !absl::StartsWith(server, "localhost:") &&
      !absl::StartsWith(server, "[::1]:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--server: '", server, "' is not a loopback address"));
  }
  const Limits limits[] = {
      {"nodes", absl::GetFlag(FLAGS_nodes), 1, 20000},
      {"devices_per_node", absl::GetFlag(FLAGS_devices_per_node), 1, 64},
      {"kernels", absl::GetFlag(FLAGS_kernels), 1, 1000},
      {"variants", absl::GetFlag(FLAGS_variants), 1, 64},
      {"select_clients", absl::GetFlag(FLAGS_select_clients), 1, 64},
      {"agent_channels", absl::GetFlag(FLAGS_agent_channels), 0, 512},
      {"agent_processes", absl::GetFlag(FLAGS_agent_processes), 1, 16},
      {"duration (ms)",
       absl::ToInt64Milliseconds(absl::GetFlag(FLAGS_duration)), 100, 120000},
  };
  for (const Limits& l : limits) {
    if (l.value < l.min || l.value > l.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", l.flag, ": ", l.value, " is not in ", l.min, "..", l.max));
    }
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "text" && format != "kv") {
    return absl::InvalidArgumentError("--format: not text or kv");
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::Channel> NewChannel(int id) {
  grpc::ChannelArguments args;
  args.SetInt("ctxsel.load.client", id);  // its own connection
  return grpc::CreateCustomChannel(absl::GetFlag(FLAGS_server),
                                   grpc::InsecureChannelCredentials(), args);
}

grpc::Status Call(v1::Ctxsel::Stub& stub, int /*sequence*/) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::PingRequest request;
  v1::PingResponse response;
  return stub.Ping(&context, request, &response);
}

grpc::Status Call(v1::Placement::Stub& stub, int sequence) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  const v1::SelectRequest request =
      LoadSelect(sequence % absl::GetFlag(FLAGS_kernels), sequence);
  v1::SelectResponse response;
  return stub.Select(&context, request, &response);
}

// Runs `clients` threads calling one RPC back to back for `duration`.
template <typename Service>
LatencySummary RunPhase(int clients, absl::Duration duration) {
  std::vector<LatencyRecorder> recorders(clients);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  const absl::Time end = start + duration;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([c, end, &recorders] {
      auto stub = Service::NewStub(NewChannel(c));
      for (int i = c; absl::Now() < end; i += 7) {
        const absl::Time t0 = absl::Now();
        const grpc::Status s = Call(*stub, i);
        recorders[c].Add(absl::Now() - t0, s.ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<const LatencyRecorder*> all;
  for (const LatencyRecorder& r : recorders) all.push_back(&r);
  return Summarize(all, absl::Now() - start);
}

absl::Status RegisterKernels() {
  auto stub = v1::Variants::NewStub(NewChannel(-1));
  for (int k = 0; k < absl::GetFlag(FLAGS_kernels); ++k) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::RegisterVariantsResponse response;
    grpc::Status s = stub->RegisterVariants(
        &context, LoadKernel(k, absl::GetFlag(FLAGS_variants)), &response);
    if (!s.ok()) {
      return FromGrpcStatus(
          s, absl::StrCat("RegisterVariants ", LoadKernelName(k)));
    }
  }
  return absl::OkStatus();
}

void Print(const std::vector<std::pair<std::string, std::string>>& report) {
  const bool kv = absl::GetFlag(FLAGS_format) == "kv";
  for (const auto& [key, value] : report) {
    if (kv) {
      std::printf("%s=%s\n", key.c_str(), value.c_str());
    } else {
      std::printf("%-16s %s\n", key.c_str(), value.c_str());
    }
  }
}

void AddSummary(const std::string& name, const LatencySummary& s,
                std::vector<std::pair<std::string, std::string>>& report) {
  const bool kv = absl::GetFlag(FLAGS_format) == "kv";
  if (!kv) {
    report.emplace_back(name, FormatSummary(s));
    return;
  }
  auto us = [](absl::Duration d) {
    return absl::StrCat(absl::ToInt64Microseconds(d));
  };
  report.emplace_back(name + "_calls", absl::StrCat(s.calls));
  report.emplace_back(name + "_errors", absl::StrCat(s.errors));
  report.emplace_back(name + "_per_s", absl::StrFormat("%.1f", s.per_second));
  report.emplace_back(name + "_p50_us", us(s.p50));
  report.emplace_back(name + "_p90_us", us(s.p90));
  report.emplace_back(name + "_p99_us", us(s.p99));
  report.emplace_back(name + "_max_us", us(s.max));
}

// One share of the agents: nodes first_node .. first_node + nodes - 1.
AgentFleetOptions FleetOptions(int first_node, int nodes) {
  AgentFleetOptions options;
  options.server = absl::GetFlag(FLAGS_server);
  options.first_node = first_node;
  options.nodes = nodes;
  options.devices_per_node = absl::GetFlag(FLAGS_devices_per_node);
  options.channels = absl::GetFlag(FLAGS_agent_channels);
  if (options.channels == 0) options.channels = (nodes + 89) / 90;
  options.node_prefix = absl::GetFlag(FLAGS_node_prefix);
  return options;
}

// Another process's share of the agents. It talks to this one through two
// pipes: it writes "started" once its fleet beats, answers 'a' with "stats
// SENT ANSWERED REREPORTS FAILED", and answers 's' (or the pipe's end) with
// the same line, then stops its fleet.
class AgentProcess {
 public:
  // Forks; call before this process first uses gRPC (not fork-safe).
  static absl::StatusOr<std::unique_ptr<AgentProcess>> Fork(
      const AgentFleetOptions& options) {
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) {
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    }
    const pid_t pid = fork();
    if (pid < 0) {
      return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
    }
    if (pid == 0) {
      close(up[0]);
      close(down[1]);
      std::_Exit(Serve(options, up[1], down[0]));
    }
    close(up[1]);
    close(down[0]);
    return std::unique_ptr<AgentProcess>(
        new AgentProcess(pid, down[1], fdopen(up[0], "r")));
  }

  ~AgentProcess() {
    if (to_child_ >= 0) close(to_child_);
    if (from_child_ != nullptr) std::fclose(from_child_);
    waitpid(pid_, nullptr, 0);
  }

  // Waits until its agents all beat.
  absl::Status Started() {
    char word[16] = {};
    if (std::fscanf(from_child_, "%15s", word) != 1 ||
        std::strcmp(word, "started") != 0) {
      return absl::UnavailableError(
          absl::StrCat("agent process ", pid_, " did not start its agents"));
    }
    return absl::OkStatus();
  }

  // Its agents' counts so far (no latencies).
  absl::StatusOr<AgentStats> Counts() { return Ask('a'); }

  // Stops its agents and returns their counts (no latencies).
  absl::StatusOr<AgentStats> Stop() { return Ask('s'); }

 private:
  AgentProcess(pid_t pid, int to_child, FILE* from_child)
      : pid_(pid), to_child_(to_child), from_child_(from_child) {}

  // Sends `command` and reads the "stats" line it answers with.
  absl::StatusOr<AgentStats> Ask(char command) {
    long long v[4];
    if (write(to_child_, &command, 1) != 1 ||
        std::fscanf(from_child_, " stats %lld %lld %lld %lld", &v[0], &v[1],
                    &v[2], &v[3]) != 4) {
      return absl::UnavailableError(
          absl::StrCat("agent process ", pid_, " gave no counts"));
    }
    AgentStats stats;
    stats.beats_sent = v[0];
    stats.beats_answered = v[1];
    stats.rereports = v[2];
    stats.streams_failed = v[3];
    return stats;
  }

  static void WriteStats(int up, const AgentStats& s) {
    dprintf(up, "stats %lld %lld %lld %lld\n",
            static_cast<long long>(s.beats_sent),
            static_cast<long long>(s.beats_answered),
            static_cast<long long>(s.rereports),
            static_cast<long long>(s.streams_failed));
  }

  static int Serve(const AgentFleetOptions& options, int up, int down) {
    auto fleet = AgentFleet::Start(options);
    if (!fleet.ok()) {
      std::fprintf(stderr, "ctxsel-load: %s\n",
                   fleet.status().ToString().c_str());
      return 3;
    }
    dprintf(up, "started\n");
    char command;
    while (read(down, &command, 1) == 1 && command == 'a') {
      WriteStats(up, (*fleet)->Stats());
    }
    WriteStats(up, (*fleet)->Stats());
    return (*fleet)->Stop().ok() ? 0 : 1;
  }

  const pid_t pid_;
  int to_child_;
  FILE* from_child_;
};

int Run() {
  if (absl::Status s = CheckFlags(); !s.ok()) {
    std::fprintf(stderr, "ctxsel-load: %s\n", s.ToString().c_str());
    return 2;
  }
  // The other processes' shares first: before this process uses gRPC.
  const int total_nodes = absl::GetFlag(FLAGS_nodes);
  const int processes =
      std::min(absl::GetFlag(FLAGS_agent_processes), total_nodes);
  const int own_nodes =
      total_nodes - (processes - 1) * (total_nodes / processes);
  std::vector<std::unique_ptr<AgentProcess>> others;
  for (int p = 1; p < processes; ++p) {
    const int share = total_nodes / processes;
    auto child =
        AgentProcess::Fork(FleetOptions(own_nodes + (p - 1) * share, share));
    if (!child.ok()) {
      std::fprintf(stderr, "ctxsel-load: %s\n",
                   child.status().ToString().c_str());
      return 3;
    }
    others.push_back(*std::move(child));
  }
  if (absl::Status s = RegisterKernels(); !s.ok()) {
    std::fprintf(stderr, "ctxsel-load: %s\n", s.ToString().c_str());
    return 3;
  }
  const AgentFleetOptions options = FleetOptions(0, own_nodes);
  const absl::Time report_start = absl::Now();
  auto fleet = AgentFleet::Start(options);
  if (!fleet.ok()) {
    std::fprintf(stderr, "ctxsel-load: %s\n",
                 fleet.status().ToString().c_str());
    return 3;
  }
  // Streams beat while the fleet reports; the rate counts from here, when
  // every node beats.
  for (auto& other : others) {
    if (absl::Status s = other->Started(); !s.ok()) {
      std::fprintf(stderr, "ctxsel-load: %s\n", s.ToString().c_str());
      return 3;
    }
  }
  const absl::Time beats_start = absl::Now();
  const absl::Duration report_time = beats_start - report_start;
  AgentStats before = (*fleet)->Stats();
  for (auto& other : others) {
    absl::StatusOr<AgentStats> counts = other->Counts();
    if (!counts.ok()) {
      std::fprintf(stderr, "ctxsel-load: %s\n",
                   counts.status().ToString().c_str());
      return 3;
    }
    before.beats_sent += counts->beats_sent;
    before.beats_answered += counts->beats_answered;
  }
  absl::SleepFor(absl::Seconds(1));  // every stream has beaten once
  const int clients = absl::GetFlag(FLAGS_select_clients);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  const LatencySummary ping = RunPhase<v1::Ctxsel>(clients, duration);
  const LatencySummary select = RunPhase<v1::Placement>(clients, duration);
  // Beat latencies come from this process's agents; counts from all.
  AgentStats agents = (*fleet)->Stats();
  const absl::Duration beating = absl::Now() - beats_start;
  for (auto& other : others) {
    absl::StatusOr<AgentStats> theirs = other->Stop();
    if (!theirs.ok()) {
      std::fprintf(stderr, "ctxsel-load: %s\n",
                   theirs.status().ToString().c_str());
      ++agents.streams_failed;
      continue;
    }
    agents.beats_sent += theirs->beats_sent;
    agents.beats_answered += theirs->beats_answered;
    agents.rereports += theirs->rereports;
    agents.streams_failed += theirs->streams_failed;
  }

  std::vector<std::pair<std::string, std::string>> report = {
      {"nodes", absl::StrCat(total_nodes)},
      {"devices", absl::StrCat(total_nodes * options.devices_per_node)},
      {"agent_processes", absl::StrCat(processes)},
      {"clients", absl::StrCat(clients)},
      {"report_s", absl::StrFormat("%.2f", absl::ToDoubleSeconds(report_time))},
  };
  AddSummary("ping", ping, report);
  AddSummary("select", select, report);
  AddSummary("beat", agents.beat_latency, report);
  report.emplace_back("beats_sent", absl::StrCat(agents.beats_sent));
  report.emplace_back("beats_answered", absl::StrCat(agents.beats_answered));
  // Beats per second once the whole fleet beats (both phases): answered,
  // and sent (below nodes / interval when the agents cannot keep up).
  const double beating_s = std::max(absl::ToDoubleSeconds(beating), 1e-3);
  report.emplace_back(
      "beats_per_s",
      absl::StrFormat(
          "%.1f", (agents.beats_answered - before.beats_answered) / beating_s));
  report.emplace_back(
      "beats_sent_per_s",
      absl::StrFormat("%.1f",
                      (agents.beats_sent - before.beats_sent) / beating_s));
  report.emplace_back("rereports", absl::StrCat(agents.rereports));
  report.emplace_back("streams_failed", absl::StrCat(agents.streams_failed));
  if (const int pid = absl::GetFlag(FLAGS_server_pid); pid > 0) {
    absl::StatusOr<ProcStatus> proc = ReadProcStatus(pid);
    if (proc.ok()) {
      report.emplace_back("server_rss_mib",
                          absl::StrFormat("%.1f", proc->rss_bytes / 1048576.0));
      report.emplace_back("server_threads", absl::StrCat(proc->threads));
    } else {
      std::fprintf(stderr, "ctxsel-load: %s\n",
                   proc.status().ToString().c_str());
    }
  }
  const absl::Status stopped = (*fleet)->Stop();
  Print(report);
  if (!stopped.ok()) {
    std::fprintf(stderr, "ctxsel-load: %s\n", stopped.ToString().c_str());
  }
  return ping.calls > 0 && select.calls > 0 && agents.streams_failed == 0 ? 0
                                                                          : 1;
}

}  // namespace
}  // namespace ctxsel::load

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Load test of a running ctxsel-server: simulated agents + Select "
      "clients; prints throughput, latency percentiles and server RSS.");
  absl::ParseCommandLine(argc, argv);
  // The load tool shares the machine's cores with the server it measures:
  // Abseil's lock-order check on every Lock() (a debug aid, off in the
  // server too) was 7% of its CPU with 10,000 agents.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return ctxsel::load::Run();
}
