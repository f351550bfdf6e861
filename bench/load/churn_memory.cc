// ctxsel-churn: a running server's memory under node churn, with watchers
// that never read (issue 22, item 5). Reports a fleet, opens --watchers
// WatchInventory streams (each on a connection of its own, never read),
// then re-reports every node in turn, with its device count alternating
// (KIND_CHANGED), and deregisters and re-reports one node in --cycle
// (KIND_REMOVED, KIND_ADDED), for --duration; prints the server's RSS
// (--server_pid) at the start and every --sample_every, and at the end its
// growth: of its anonymous memory (the heap, not code pages) since before
// the watchers opened, so that it counts the watchers' whole footprint
// however late a loaded server gets to their calls.
//
//   ctxsel-server --insecure --node_ttl=1h &
//   ctxsel-churn --server=127.0.0.1:7070 --server_pid=$! --watchers=200
//
// With --watchers=0, a --rate and a long --duration it is the soak: steady
// churn, RSS sampled over time.
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/load/load_fleet.h"
#include "bench/load/proc_status.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7070", "The server, host:port.");
ABSL_FLAG(int, server_pid, 0, "The server's pid, for its RSS.");
ABSL_FLAG(int, watchers, 200, "WatchInventory streams that never read.");
ABSL_FLAG(int, nodes, 200, "Nodes in the fleet.");
ABSL_FLAG(int, devices_per_node, 8, "Devices of a node (alternates -1).");
ABSL_FLAG(int, cycle, 10, "One node in this many is removed and re-added.");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(60), "How long to churn.");
ABSL_FLAG(int64_t, reports, 0,
          "Stop after this many reports (0: --duration only), so that runs "
          "of servers of different speeds compare.");
ABSL_FLAG(double, rate, 0,
          "Reports per second (0: as fast as the server answers); a low rate "
          "is a soak of a slowly changing fleet.");
ABSL_FLAG(absl::Duration, sample_every, absl::Seconds(10),
          "How often to print the server's RSS.");

namespace ctxsel::load {
namespace {

double RssMib(int pid) {
  if (pid <= 0) return 0;
  absl::StatusOr<ProcStatus> status = ReadProcStatus(pid);
  return status.ok() ? status->rss_bytes / 1048576.0 : 0;
}

double AnonMib(int pid) {
  if (pid <= 0) return 0;
  absl::StatusOr<ProcStatus> status = ReadProcStatus(pid);
  return status.ok() ? status->anon_rss_bytes / 1048576.0 : 0;
}

// `watcher`: a connection whose flow-control window stays small, so that a
// stream never read holds the server back. With gRPC's defaults the client
// transport grows the window (BDP probes) and takes every message whether or
// not the application reads: the server then converts and writes each event
// to each watcher, 200 watchers make 3,000 reports take 70 s instead of 3,
// and how much the server holds at once depends on how loaded it is.
std::shared_ptr<grpc::Channel> OwnConnection(const std::string& server,
                                             bool watcher) {
  grpc::ChannelArguments args;
  // A connection per watcher: flow control holds back one stream only.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (watcher) {
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 << 10);
  }
  return grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(),
                                   args);
}

int Run() {
  const std::string server = absl::GetFlag(FLAGS_server);
  const int pid = absl::GetFlag(FLAGS_server_pid);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int devices = absl::GetFlag(FLAGS_devices_per_node);
  auto inventory =
      v1::Inventory::NewStub(OwnConnection(server, /*watcher=*/false));
  auto report = [&](int n, int count) {
    v1::ReportNodeRequest request;
    *request.mutable_node() =
        LoadNode(absl::StrCat("churn-n", n), n, std::max(1, count));
    grpc::ClientContext context;
    v1::ReportNodeResponse response;
    return inventory->ReportNode(&context, request, &response);
  };
  for (int n = 0; n < nodes; ++n) {
    grpc::Status s = report(n, devices);
    if (!s.ok()) {
      std::fprintf(stderr, "report: %s\n", s.error_message().c_str());
      return 1;
    }
  }
  struct Watcher {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::Inventory::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::InventoryEvent>> reader;
  };
  std::vector<std::unique_ptr<Watcher>> watchers;
  const double before_anon = AnonMib(pid);
  for (int i = 0; i < absl::GetFlag(FLAGS_watchers); ++i) {
    auto w = std::make_unique<Watcher>();
    w->channel = OwnConnection(server, /*watcher=*/true);
    w->stub = v1::Inventory::NewStub(w->channel);
    v1::WatchInventoryRequest request;
    request.set_initial(true);
    w->reader = w->stub->WatchInventory(&w->context, request);
    watchers.push_back(std::move(w));
  }
  // The server has started each watch: its first event (the initial
  // snapshot's) carried the headers. No message is read. (An empty fleet
  // sends no first event.)
  if (nodes > 0) {
    for (auto& w : watchers) w->reader->WaitForInitialMetadata();
  }
  const double start_rss = RssMib(pid);
  std::printf(
      "watchers=%zu nodes=%d t=0s rss_mib=%.1f anon_mib=%.1f "
      "(before watchers %.1f)\n",
      watchers.size(), nodes, start_rss, AnonMib(pid), before_anon);
  const absl::Time start = absl::Now();
  absl::Time next_sample = start + absl::GetFlag(FLAGS_sample_every);
  int64_t reports = 0;
  const int cycle = std::max(1, absl::GetFlag(FLAGS_cycle));
  const int64_t max_reports = absl::GetFlag(FLAGS_reports);
  auto more = [&] {
    return absl::Now() - start < absl::GetFlag(FLAGS_duration) &&
           (max_reports <= 0 || reports < max_reports);
  };
  for (int round = 1; more(); ++round) {
    for (int n = 0; n < nodes && more(); ++n) {
      if (n % cycle == round % cycle) {
        v1::DeregisterRequest request;
        request.set_node(absl::StrCat("churn-n", n));
        grpc::ClientContext context;
        v1::DeregisterResponse response;
        inventory->Deregister(&context, request, &response).ok();
      }
      report(n, devices - round % 2).ok();
      ++reports;
      if (const double rate = absl::GetFlag(FLAGS_rate); rate > 0) {
        absl::SleepFor(start + absl::Seconds(reports / rate) - absl::Now());
      }
      if (absl::Now() >= next_sample) {
        std::printf("t=%.0fs reports=%ld rss_mib=%.1f\n",
                    absl::ToDoubleSeconds(absl::Now() - start),
                    static_cast<long>(reports), RssMib(pid));
        std::fflush(stdout);
        next_sample += absl::GetFlag(FLAGS_sample_every);
      }
    }
  }
  const double end_rss = RssMib(pid);
  const double end_anon = AnonMib(pid);
  std::printf(
      "end t=%.0fs reports=%ld rss_mib=%.1f anon_mib=%.1f growth_mib=%.1f\n",
      absl::ToDoubleSeconds(absl::Now() - start), static_cast<long>(reports),
      end_rss, end_anon, end_anon - before_anon);
  for (auto& w : watchers) w->context.TryCancel();
  return 0;
}

}  // namespace
}  // namespace ctxsel::load

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ctxsel::load::Run();
}
