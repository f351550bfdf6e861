// agent_fleet.h: many simulated node agents in one process, for load tests.
//
// Each agent reports its node (ReportNode), then keeps a Heartbeat stream
// open and beats every heartbeat interval the server gives, carrying a
// changing utilisation for every device — what ctxsel-agent does, minus the
// hardware discovery. Streams use gRPC's client callback API, so thousands
// of agents need no thread each: one thread sends the due beats, spread
// evenly over the interval, and another re-reports an agent the server
// answers with ACTION_REREPORT (a re-report, a unary call, never delays beats).
// Streams are spread over a few channels (TCP connections).
//
//   AgentFleetOptions options;
//   options.server = "127.0.0.1:7070";
//   options.nodes = 2000;
//   auto fleet = AgentFleet::Start(options);
//   ...                              // measure
//   AgentStats stats = (*fleet)->Stats();
//   (*fleet)->Stop();                // closes streams, deregisters nodes
#ifndef CTXSEL_BENCH_LOAD_AGENT_FLEET_H_
#define CTXSEL_BENCH_LOAD_AGENT_FLEET_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "bench/load/latency.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"

namespace ctxsel::load {

struct AgentFleetOptions {
  std::string server;  // host:port
  std::string node_prefix = "load-n";
  int nodes = 200;
  // This fleet's nodes are first_node .. first_node + nodes - 1 (several
  // fleets, e.g. in several processes, share one numbering).
  int first_node = 0;
  int devices_per_node = 8;
  int channels = 8;
  absl::Duration rpc_timeout = absl::Seconds(10);
};

struct AgentStats {
  int64_t beats_sent = 0;
  int64_t beats_answered = 0;
  int64_t rereports = 0;        // ACTION_REREPORT answers acted on
  int64_t streams_failed = 0;   // streams that ended with an error status
  LatencySummary beat_latency;  // per_second: beats answered per second
};

class Agent;

class AgentFleet {
 public:
  // Reports every node and opens its stream, which beats from then on. An
  // error (the first failed report, with the node's id) leaves nothing
  // running.
  static absl::StatusOr<std::unique_ptr<AgentFleet>> Start(
      AgentFleetOptions options);
  ~AgentFleet();  // Stop() if not stopped

  // Counts since Start; beat latency from a beat's write to its answer.
  AgentStats Stats() const;

  // Stops beating, closes the streams and deregisters the nodes; returns
  // the first failed deregistration, if any. Idempotent.
  absl::Status Stop();

 private:
  explicit AgentFleet(AgentFleetOptions options);
  absl::Status ReportAll();
  void BeatLoop();
  void RereportLoop();
  absl::Status Report(const v1::Node& node, absl::Duration* interval);
  v1::Inventory::Stub* StubFor(size_t agent) const;

  const AgentFleetOptions options_;
  std::vector<std::unique_ptr<v1::Inventory::Stub>> stubs_;
  std::vector<std::unique_ptr<Agent>> agents_;  // fixed before beating
  // Agents [0, opened_) are reported and their streams open.
  std::atomic<size_t> opened_{0};
  std::atomic<int64_t> interval_ms_{1000};
  std::atomic<int64_t> rereports_{0};
  absl::Notification stop_beating_;
  std::thread beater_;
  std::thread rereporter_;
  absl::Time started_;  // when the first stream opened
  bool stopped_ = false;
};

}  // namespace ctxsel::load

#endif  // CTXSEL_BENCH_LOAD_AGENT_FLEET_H_
