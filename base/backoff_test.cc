#include "base/backoff.h"

#include <vector>

#include "base/fake_clock.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(BackoffTest, DoublesUpToTheMaxWithEqualJitter) {
  double u = 0.0;
  Backoff backoff({absl::Milliseconds(100), absl::Milliseconds(500)},
                  [&u] { return u; });
  // u = 0: half the ceiling; u = 1 would be the whole ceiling.
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(50));
  EXPECT_EQ(backoff.current(), absl::Milliseconds(200));
  u = 0.5;
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(150));  // 100 + 100 * 0.5
  u = 1.0;
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(400));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(500));  // capped
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(500));
  backoff.Reset();
  EXPECT_EQ(backoff.current(), absl::Milliseconds(100));
}

TEST(BackoffTest, DefaultRandomSourceJittersWithinTheCeiling) {
  Backoff backoff({absl::Seconds(1), absl::Seconds(1)});
  bool differ = false;
  absl::Duration first = backoff.Next();
  for (int i = 0; i < 100; ++i) {
    absl::Duration d = backoff.Next();
    EXPECT_GE(d, absl::Milliseconds(500));
    EXPECT_LE(d, absl::Seconds(1));
    differ |= d != first;
  }
  EXPECT_TRUE(differ) << "no jitter in 100 draws";
}

TEST(BackoffTest, WaitSleepsOnTheClockButNotPastTheDeadline) {
  FakeClock clock;
  Backoff backoff({absl::Milliseconds(100), absl::Seconds(2)},
                  [] { return 1.0; });
  const absl::Time deadline = clock.Now() + absl::Milliseconds(250);
  EXPECT_TRUE(backoff.Wait(clock, deadline));   // 100 ms
  EXPECT_TRUE(backoff.Wait(clock, deadline));   // 150 ms, cut from 200
  EXPECT_FALSE(backoff.Wait(clock, deadline));  // past it: no sleep
  EXPECT_EQ(clock.slept,
            (std::vector<absl::Duration>{absl::Milliseconds(100),
                                         absl::Milliseconds(150)}));
  clock.Stop();
  EXPECT_FALSE(backoff.Wait(clock));
}

TEST(BackoffTest, InitialAboveMaxStartsAtMax) {
  Backoff backoff({absl::Seconds(10), absl::Seconds(1)}, [] { return 1.0; });
  EXPECT_EQ(backoff.Next(), absl::Seconds(1));
}

}  // namespace
}  // namespace ctxsel
