#include "bench/load/agent_fleet.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/grpc_status.h"
#include "base/proto_time.h"
#include "bench/load/agent.h"
#include "bench/load/load_fleet.h"

namespace ctxsel::load {
namespace {

constexpr absl::Duration kTick = absl::Milliseconds(10);
constexpr absl::Duration kCloseTimeout = absl::Seconds(10);

}  // namespace

AgentFleet::AgentFleet(AgentFleetOptions options)
    : options_(std::move(options)) {
  for (int c = 0; c < std::max(1, options_.channels); ++c) {
    grpc::ChannelArguments args;
    // A distinct argument gives each channel its own connection.
    args.SetInt("ctxsel.load.channel", c);
    stubs_.push_back(v1::Inventory::NewStub(grpc::CreateCustomChannel(
        options_.server, grpc::InsecureChannelCredentials(), args)));
  }
}

AgentFleet::~AgentFleet() { Stop().IgnoreError(); }

absl::StatusOr<std::unique_ptr<AgentFleet>> AgentFleet::Start(
    AgentFleetOptions options) {
  std::unique_ptr<AgentFleet> fleet(new AgentFleet(std::move(options)));
  const int first = fleet->options_.first_node;
  for (int n = first; n < first + fleet->options_.nodes; ++n) {
    fleet->agents_.push_back(std::make_unique<Agent>(
        LoadNode(absl::StrCat(fleet->options_.node_prefix, n), n,
                 fleet->options_.devices_per_node)));
  }
  fleet->started_ = absl::Now();
  // Beating starts with the first report, as each real agent beats right
  // after its own: a node that waited for the whole fleet's reports would
  // outlive the TTL (reporting 10,000 nodes takes longer) and be
  // re-reported.
  fleet->beater_ = std::thread([f = fleet.get()] { f->BeatLoop(); });
  fleet->rereporter_ = std::thread([f = fleet.get()] { f->RereportLoop(); });
  if (absl::Status s = fleet->ReportAll(); !s.ok()) {
    // Stop beating; close the streams opened so far, leave the nodes.
    fleet->stop_beating_.Notify();
    fleet->beater_.join();
    fleet->rereporter_.join();
    for (size_t i = 0; i < fleet->opened_.load(); ++i) {
      fleet->agents_[i]->Close(kCloseTimeout);
    }
    fleet->stopped_ = true;
    return s;
  }
  return fleet;
}

v1::Inventory::Stub* AgentFleet::StubFor(size_t agent) const {
  return stubs_[agent % stubs_.size()].get();
}

absl::Status AgentFleet::Report(const v1::Node& node,
                                absl::Duration* interval) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  v1::ReportNodeRequest request;
  *request.mutable_node() = node;
  v1::ReportNodeResponse response;
  const size_t stub = std::hash<std::string>()(node.id());
  grpc::Status s = StubFor(stub)->ReportNode(&context, request, &response);
  if (!s.ok()) return FromGrpcStatus(s, absl::StrCat("ReportNode ", node.id()));
  if (interval != nullptr) {
    *interval = FromProtoDuration(response.heartbeat_interval());
  }
  return absl::OkStatus();
}

absl::Status AgentFleet::ReportAll() {
  for (size_t i = 0; i < agents_.size(); ++i) {
    absl::Duration interval;
    if (absl::Status s = Report(agents_[i]->node(), &interval); !s.ok()) {
      return s;
    }
    interval_ms_.store(absl::ToInt64Milliseconds(interval));
    agents_[i]->Open(StubFor(i));
    opened_.store(i + 1);
  }
  return absl::OkStatus();
}

void AgentFleet::BeatLoop() {
  // Agent i beats first right after its report and then every interval:
  // the reports spread the phases, so the load is even.
  std::vector<absl::Time> due(agents_.size(), absl::InfinitePast());
  int64_t round = 0;
  while (!stop_beating_.WaitForNotificationWithTimeout(kTick)) {
    const absl::Time now = absl::Now();
    const size_t n = opened_.load();
    for (size_t i = 0; i < n; ++i) {
      Agent& agent = *agents_[i];
      if (due[i] > now) continue;
      const int64_t ms =
          agent.interval_ms() > 0 ? agent.interval_ms() : interval_ms_.load();
      due[i] = now + absl::Milliseconds(ms);
      agent.Beat(((i * 7 + round++) % 101) / 101.0);
    }
  }
}

void AgentFleet::RereportLoop() {
  while (!stop_beating_.WaitForNotificationWithTimeout(kTick)) {
    const size_t n = opened_.load();
    for (size_t i = 0; i < n; ++i) {
      Agent& agent = *agents_[i];
      if (agent.TakeRereport() && Report(agent.node(), nullptr).ok()) {
        rereports_.fetch_add(1);
      }
    }
  }
}

AgentStats AgentFleet::Stats() const {
  AgentStats stats;
  LatencyRecorder latencies;
  for (const auto& agent : agents_) {
    stats.beats_sent += agent->beats_sent();
    stats.beats_answered += agent->beats_answered();
    stats.streams_failed += agent->failed() ? 1 : 0;
    agent->AddLatencies(latencies);
  }
  stats.rereports = rereports_.load();
  stats.beat_latency = Summarize({&latencies}, absl::Now() - started_);
  return stats;
}

absl::Status AgentFleet::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  stop_beating_.Notify();
  if (beater_.joinable()) beater_.join();
  if (rereporter_.joinable()) rereporter_.join();
  std::vector<std::string> nodes;
  for (const auto& agent : agents_) nodes.push_back(agent->node().id());
  for (auto& agent : agents_) {
    if (!agent->Close(kCloseTimeout)) {
      // Its reactions may still run: keep it alive rather than crash.
      agent.release();
    }
  }
  absl::Status first;
  for (const std::string& node : nodes) {
    grpc::ClientContext context;
    context.set_deadline(
        absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
    v1::DeregisterRequest request;
    request.set_node(node);
    v1::DeregisterResponse response;
    grpc::Status s = StubFor(0)->Deregister(&context, request, &response);
    // NOT_FOUND: its stream closed and it expired before its turn came
    // (deregistering 10,000 nodes takes longer than the node TTL).
    if (!s.ok() && s.error_code() != grpc::StatusCode::NOT_FOUND &&
        first.ok()) {
      first = FromGrpcStatus(s, absl::StrCat("Deregister ", request.node()));
    }
  }
  return first;
}

}  // namespace ctxsel::load
