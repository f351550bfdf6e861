// Reporter: keeps the server's inventory of one node true.
//
// Run() is the agent's main loop. It sends a full report when it connects,
// then a heartbeat with every device's utilisation each interval; it reports
// again at once when the server answers that it does not know the node (the
// server restarted, or the node expired), reports a changed device set
// (hot-plug, a GPU gone) as soon as discovery sees it, reconnects with
// exponential backoff and jitter when the server is unreachable, and
// deregisters the node when stopped.
//
//   RealClock clock;
//   GrpcInventoryTransport transport(make_channel, "ctxsel-agent 0.1.0");
//   Reporter::Options options;
//   options.node = "n7";
//   options.heartbeat = absl::Seconds(5);
//   Reporter reporter(options, [&] { return discovery.Run().devices; },
//                     transport, clock);
//   std::thread signals([&] { WaitForSigterm(); reporter.Stop(); });
//   absl::Status s = reporter.Run();  // returns after Stop()
#ifndef CTXSEL_AGENT_REPORTER_H_
#define CTXSEL_AGENT_REPORTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/agent_metrics.h"
#include "agent/inventory_transport.h"
#include "base/backoff.h"
#include "base/clock.h"
#include "devices/device_info.h"

namespace ctxsel::agent {

class Reporter {
 public:
  struct Options {
    std::string node;
    // The agent's beat interval. If the server asks for a shorter one, the
    // server's is used, so the node never expires for beating too slowly.
    absl::Duration heartbeat = absl::Seconds(5);
    // Reconnection delays. Capped at the heartbeat interval by default, so a
    // restarted server sees every node again within about two heartbeats.
    Backoff::Options backoff = {absl::ZeroDuration(), absl::ZeroDuration()};
    // Counts reports, beats and reconnects for Prometheus; may be null.
    AgentMetrics* metrics = nullptr;
  };

  // What happened so far; for logs and tests.
  struct Stats {
    int reports = 0;    // successful full reports, for any reason
    int rereports = 0;  // of which asked for by the server
    int changes = 0;    // of which for a changed device set
    int beats = 0;      // answered heartbeats
    int failures = 0;   // failed connection attempts and broken streams
    bool deregistered = false;
  };

  using DiscoverFn = std::function<std::vector<DeviceInfo>()>;

  // `discover` gives the node's devices now (with ids and utilisation).
  // `uniform01` is the backoff's jitter source (default: random).
  Reporter(Options options, DiscoverFn discover, InventoryTransport& transport,
           Clock& clock, std::function<double()> uniform01 = nullptr);

  // Runs until Stop(); then deregisters the node if it was ever reported.
  // Returns the deregistration's status (OK if nothing was to deregister).
  absl::Status Run();

  // Thread-safe: wakes Run() and cancels a heartbeat blocked on the network.
  void Stop();

  // The interval in use now.
  absl::Duration interval() const { return interval_; }
  const Stats& stats() const { return stats_; }

 private:
  // Sends a full report of `devices`; on success remembers them as reported.
  absl::Status Report(const std::vector<DeviceInfo>& devices);
  // Beats on `stream` until it breaks (its error) or Stop() (Cancelled).
  absl::Status BeatLoop(HeartbeatStream& stream);
  absl::Status BeatOnce(HeartbeatStream& stream);
  // The shorter of --heartbeat and a non-zero interval the server asks for.
  void UseServerInterval(absl::Duration server_interval);
  // Opens a stream, registered so that Stop() can cancel it.
  std::shared_ptr<HeartbeatStream> OpenStream();
  void CloseStream();

  Options options_;
  DiscoverFn discover_;
  InventoryTransport& transport_;
  Clock& clock_;
  Backoff backoff_;
  absl::Duration interval_;
  bool interval_logged_ = false;  // UseServerInterval has logged it
  std::vector<DeviceInfo> reported_;
  bool ever_reported_ = false;
  absl::StatusCode last_failure_ = absl::StatusCode::kOk;
  Stats stats_;

  absl::Mutex mu_;
  std::shared_ptr<HeartbeatStream> stream_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_REPORTER_H_
