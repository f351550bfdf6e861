// self_probe.h: checks, every interval, that the server still accepts new
// connections, and gives up after several failures in a row so the service
// manager restarts it.
//
// Why: with TLS the server listens on gRPC 1.51's own port, and that
// listener stops accepting for good after one accept() fails with EMFILE
// (anyone can open idle connections up to the descriptor limit). The
// process stays up and its open connections keep working, so nothing else
// notices. The probe is what a new client does: a fresh connection (TLS
// handshake included) and a health check on it.
//
//   SelfProbe probe(
//       {.interval = absl::Seconds(5), .failures = 3},
//       [&] { return server->ProbeNewConnection(absl::Seconds(5)); },
//       [] { SdNotify("WATCHDOG=1"); },
//       [](const absl::Status& last) { /* exit non-zero */ });
#ifndef CTXSEL_SERVER_MAIN_SELF_PROBE_H_
#define CTXSEL_SERVER_MAIN_SELF_PROBE_H_

#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ctxsel::server {

struct SelfProbeOptions {
  // A probe starts this long after the previous one started (or when it
  // ended, if it took longer).
  absl::Duration interval = absl::Seconds(5);
  // Consecutive failed probes after which `give_up` runs.
  int failures = 3;
};

class SelfProbe {
 public:
  // Starts a thread that runs `probe` every options.interval: after each
  // that returns OK, `passed` (the watchdog ping); after options.failures
  // failures in a row, `give_up` with the last failure, once, and the
  // thread ends. Each failure is logged.
  SelfProbe(SelfProbeOptions options, std::function<absl::Status()> probe,
            std::function<void()> passed,
            std::function<void(const absl::Status&)> give_up);
  SelfProbe(const SelfProbe&) = delete;
  SelfProbe& operator=(const SelfProbe&) = delete;
  // Stops the thread (waits for a probe in progress).
  ~SelfProbe();

 private:
  void Run();

  const SelfProbeOptions options_;
  const std::function<absl::Status()> probe_;
  const std::function<void()> passed_;
  const std::function<void(const absl::Status&)> give_up_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MAIN_SELF_PROBE_H_
