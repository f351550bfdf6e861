// clock.h: time for the loops that wait (reconnects, heartbeats),
// replaceable in tests.
//
// A loop never calls sleep() directly: it waits through a Clock, so a stop
// request wakes it at once and unit tests can run hours of heartbeats or
// reconnects in microseconds with a fake clock.
//
//   RealClock clock;
//   if (!clock.SleepUntil(clock.Now() + absl::Seconds(5))) return;  // stopped
#ifndef CTXSEL_BASE_CLOCK_H_
#define CTXSEL_BASE_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ctxsel {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // Waits until `deadline` or until Stop(); false if stopped.
  virtual bool SleepUntil(absl::Time deadline) = 0;
  // Wakes every sleeper now and makes later sleeps return false at once.
  virtual void Stop() = 0;
  virtual bool stopped() = 0;

  bool SleepFor(absl::Duration d) { return SleepUntil(Now() + d); }
};

// The wall clock; Stop() is thread-safe (call it from a signal thread).
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }

  bool SleepUntil(absl::Time deadline) override {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(absl::Condition(&stopped_), deadline);
    return !stopped_;
  }

  void Stop() override {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }

  bool stopped() override {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

 private:
  absl::Mutex mu_;
  bool stopped_ = false;
};

}  // namespace ctxsel

#endif  // CTXSEL_BASE_CLOCK_H_
