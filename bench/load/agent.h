// agent.h: one simulated agent's Heartbeat stream (gRPC client callback
// API), driven by AgentFleet's beat thread.
//
//   Agent agent(node);
//   agent.Open(stub);
//   agent.Beat(0.4);            // from one thread at a time
//   if (agent.TakeRereport()) { /* ReportNode again */ }
//   agent.Close(absl::Seconds(5));  // cancels, waits for the stream's end
#ifndef CTXSEL_BENCH_LOAD_AGENT_H_
#define CTXSEL_BENCH_LOAD_AGENT_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "bench/load/latency.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"

namespace ctxsel::load {

class Agent final : public grpc::ClientBidiReactor<v1::HeartbeatRequest,
                                                   v1::HeartbeatResponse> {
 public:
  explicit Agent(v1::Node node) : node_(std::move(node)) {}

  const v1::Node& node() const { return node_; }

  // Starts the stream and the first read.
  void Open(v1::Inventory::Stub* stub);

  // Sends one beat with every device at `utilisation` (0..1); false (and
  // nothing sent) while the previous beat is still being written or after
  // the stream ended.
  bool Beat(double utilisation);

  // True once after the server answered ACTION_REREPORT.
  bool TakeRereport() {
    // Read first: the re-report loop asks every agent every tick, and a
    // write would take each agent's cache line away from its stream.
    return rereport_.load(std::memory_order_relaxed) &&
           rereport_.exchange(false);
  }

  // Cancels the stream and waits up to `timeout` for its end; false if it
  // did not end in time.
  bool Close(absl::Duration timeout);

  // The interval the server asked for last (0 before any answer).
  int64_t interval_ms() const { return interval_ms_.load(); }
  int64_t beats_sent() const { return beats_sent_.load(); }
  int64_t beats_answered() const { return beats_answered_.load(); }
  bool failed() const { return failed_.load(); }
  // Beat latencies so far, merged into `out`.
  void AddLatencies(LatencyRecorder& out) const;

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  const v1::Node node_;
  grpc::ClientContext context_;
  v1::HeartbeatRequest beat_;     // owned by the write in flight
  v1::HeartbeatResponse answer_;  // owned by the read in flight
  mutable absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time sent_ ABSL_GUARDED_BY(mu_);
  LatencyRecorder latencies_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> rereport_{false};
  std::atomic<bool> failed_{false};
  std::atomic<int64_t> interval_ms_{0};
  std::atomic<int64_t> beats_sent_{0};
  std::atomic<int64_t> beats_answered_{0};
  absl::Notification ended_;
};

}  // namespace ctxsel::load

#endif  // CTXSEL_BENCH_LOAD_AGENT_H_
