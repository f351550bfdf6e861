// backoff.h: the one reconnect/retry backoff of ctxsel — the agent's
// reconnects to the server, the client's inventory watch, the etcd watch,
// `ctxsel-cli select --wait`.
//
// Each failure doubles the delay from `initial` up to `max`; the delay
// actually waited is drawn uniformly from [delay/2, delay] ("equal jitter"),
// so that 50 agents (or replicas, or CLIs) that lost the same server do not
// all come back in the same millisecond. Reset() after a success. The random
// source is injectable, and Wait() sleeps through a Clock (base/clock.h), so
// tests are deterministic and take no time.
//
//   Backoff backoff({absl::Milliseconds(50), absl::Seconds(5)});
//   while (!Connect()) {
//     if (!backoff.Wait(clock)) return;  // the clock was stopped
//   }
//   backoff.Reset();
#ifndef CTXSEL_BASE_BACKOFF_H_
#define CTXSEL_BASE_BACKOFF_H_

#include <functional>

#include "absl/time/time.h"
#include "base/clock.h"

namespace ctxsel {

class Backoff {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(100);
    absl::Duration max = absl::Seconds(5);
  };

  // `uniform01` returns numbers in [0, 1); the default is absl::BitGen.
  explicit Backoff(Options options,
                   std::function<double()> uniform01 = nullptr);

  // The delay to wait before the next attempt, in [ceiling/2, ceiling]
  // where the ceiling is current(); then doubles the ceiling (up to max).
  absl::Duration Next();

  // Sleeps Next() on `clock`, but not past `deadline`; false, without
  // drawing a delay, when `deadline` has passed already, and false when the
  // clock was stopped.
  bool Wait(Clock& clock, absl::Time deadline = absl::InfiniteFuture());

  // The ceiling Next() draws under now (before jitter); for logs and tests.
  absl::Duration current() const { return current_; }

  void Reset() { current_ = options_.initial; }

 private:
  Options options_;
  std::function<double()> uniform01_;
  absl::Duration current_;
};

}  // namespace ctxsel

#endif  // CTXSEL_BASE_BACKOFF_H_
