// Exponential backoff with jitter for reconnecting to the server.
//
// Each failure doubles the delay from `initial` up to `max`; the delay
// actually waited is drawn uniformly from [delay/2, delay] ("equal jitter"),
// so that 50 agents that lost the same server do not all come back in the
// same millisecond. Reset() after a success.
//
//   Backoff backoff({absl::Milliseconds(50), absl::Seconds(5)});
//   while (!Connect()) clock.SleepFor(backoff.Next());
//   backoff.Reset();
#ifndef CTXSEL_AGENT_BACKOFF_H_
#define CTXSEL_AGENT_BACKOFF_H_

#include <functional>

#include "absl/time/time.h"

namespace ctxsel::agent {

class Backoff {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(100);
    absl::Duration max = absl::Seconds(5);
  };

  // `uniform01` returns numbers in [0, 1); the default is absl::BitGen.
  explicit Backoff(Options options,
                   std::function<double()> uniform01 = nullptr);

  // The delay to wait before the next attempt.
  absl::Duration Next();

  // The ceiling Next() draws under now (before jitter); for logs and tests.
  absl::Duration current() const { return current_; }

  void Reset() { current_ = options_.initial; }

 private:
  Options options_;
  std::function<double()> uniform01_;
  absl::Duration current_;
};

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_BACKOFF_H_
