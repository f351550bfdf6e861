#include "server/main/self_probe.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

constexpr SelfProbeOptions kFast{.interval = absl::Milliseconds(5),
                                 .failures = 3};

TEST(SelfProbeTest, PassingProbesPingAndNeverGiveUp) {
  std::atomic<int> passed{0};
  std::atomic<bool> gave_up{false};
  {
    SelfProbe probe(
        kFast, [] { return absl::OkStatus(); }, [&] { ++passed; },
        [&](const absl::Status&) { gave_up = true; });
    while (passed < 10) absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_FALSE(gave_up);
}

TEST(SelfProbeTest, GivesUpAfterFailuresInARowAndStopsPinging) {
  std::atomic<int> calls{0};
  std::atomic<int> passed{0};
  absl::Notification gave_up;
  absl::Status last;
  // Passes twice, fails once, passes, then fails for good.
  SelfProbe probe(
      kFast,
      [&] {
        const int call = ++calls;
        return call <= 2 || call == 4 ? absl::OkStatus()
                                      : absl::UnavailableError("refused");
      },
      [&] { ++passed; },
      [&](const absl::Status& status) {
        last = status;
        gave_up.Notify();
      });
  ASSERT_TRUE(gave_up.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(calls, 7);  // 3, 5, 6, 7 failed; the single failure reset
  EXPECT_EQ(passed, 3);
  EXPECT_EQ(last, absl::UnavailableError("refused"));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(calls, 7);  // no probe after giving up
}

TEST(SelfProbeTest, StopsPromptlyWhenDestroyed) {
  const absl::Time start = absl::Now();
  {
    SelfProbe probe(
        {.interval = absl::Hours(1), .failures = 1},
        [] { return absl::OkStatus(); }, [] {}, [](const absl::Status&) {});
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace ctxsel::server
