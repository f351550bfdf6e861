#include "bench/load/latency.h"

#include "gtest/gtest.h"

namespace ctxsel::load {
namespace {

TEST(LatencyTest, NearestRankPercentilesAcrossRecorders) {
  LatencyRecorder a, b;
  for (int i = 1; i <= 50; ++i) a.Add(absl::Microseconds(i), true);
  for (int i = 51; i <= 100; ++i) b.Add(absl::Microseconds(i), true);
  b.Add(absl::Seconds(9), /*ok=*/false);  // errors do not count as latency
  const LatencySummary s = Summarize({&a, &b}, absl::Seconds(2));
  EXPECT_EQ(s.calls, 100);
  EXPECT_EQ(s.errors, 1);
  EXPECT_DOUBLE_EQ(s.per_second, 50.0);
  EXPECT_EQ(s.p50, absl::Microseconds(50));
  EXPECT_EQ(s.p90, absl::Microseconds(90));
  EXPECT_EQ(s.p99, absl::Microseconds(99));
  EXPECT_EQ(s.max, absl::Microseconds(100));
  EXPECT_EQ(FormatSummary(s),
            "100 calls (1 errors), 50.0/s, p50 50us p90 90us p99 99us "
            "max 100us");
}

TEST(LatencyTest, OneCallIsEveryPercentile) {
  LatencyRecorder a;
  a.Add(absl::Microseconds(7), true);
  const LatencySummary s = Summarize({&a}, absl::Seconds(1));
  EXPECT_EQ(s.p50, absl::Microseconds(7));
  EXPECT_EQ(s.p99, absl::Microseconds(7));
}

TEST(LatencyTest, NoCallsGiveZeros) {
  LatencyRecorder a;
  a.Add(absl::Microseconds(7), false);
  const LatencySummary s = Summarize({&a}, absl::Seconds(1));
  EXPECT_EQ(s.calls, 0);
  EXPECT_EQ(s.p50, absl::ZeroDuration());
}

}  // namespace
}  // namespace ctxsel::load
