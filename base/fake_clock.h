// fake_clock.h: a Clock for tests whose time moves only when its user
// sleeps: SleepUntil jumps to the deadline (never back) and records how long
// each sleep was, so retry loops and reporters run instantly and
// deterministically.
//
//   FakeClock clock;
//   Reporter reporter(transport, clock, options);   // beats at fake times
//   EXPECT_EQ(clock.slept[0], absl::Seconds(1));
#ifndef CTXSEL_BASE_FAKE_CLOCK_H_
#define CTXSEL_BASE_FAKE_CLOCK_H_

#include <algorithm>
#include <vector>

#include "base/clock.h"

namespace ctxsel {

class FakeClock : public Clock {
 public:
  absl::Time Now() override { return now_; }
  bool SleepUntil(absl::Time deadline) override {
    if (stopped_) return false;
    slept.push_back(deadline - now_);
    now_ = std::max(now_, deadline);
    return true;
  }
  void Stop() override { stopped_ = true; }
  bool stopped() override { return stopped_; }

  // The length of every sleep asked for, in order.
  std::vector<absl::Duration> slept;

 private:
  absl::Time now_ = absl::UnixEpoch();
  bool stopped_ = false;
};

}  // namespace ctxsel

#endif  // CTXSEL_BASE_FAKE_CLOCK_H_
