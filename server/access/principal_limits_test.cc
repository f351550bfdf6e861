#include "server/access/principal_limits.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;

class PrincipalLimitsTest : public ::testing::Test {
 protected:
  PrincipalLimitOptions Options() {
    PrincipalLimitOptions options;
    options.reports_per_minute = 3;
    options.heartbeats_per_second = 2;
    options.max_streams = 2;
    options.now = [this] { return now_; };
    return options;
  }
  absl::Time now_ = absl::FromUnixSeconds(1000);
};

TEST_F(PrincipalLimitsTest, ABreachExhaustsOnlyThatPrincipal) {
  PrincipalLimits limits(Options());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(limits.Take(Budget::kReport, "node-a").ok()) << i;
  }
  absl::Status fourth = limits.Take(Budget::kReport, "node-a");
  EXPECT_EQ(fourth.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(fourth.message(), HasSubstr("'node-a' sent more than 3 reports"));
  EXPECT_TRUE(limits.Take(Budget::kReport, "node-b").ok());
  // Budgets are separate: node-a may still heartbeat.
  EXPECT_TRUE(limits.Take(Budget::kHeartbeat, "node-a").ok());
}

TEST_F(PrincipalLimitsTest, BucketsRefillWithTime) {
  PrincipalLimits limits(Options());
  ASSERT_TRUE(limits.Take(Budget::kHeartbeat, "n").ok());
  ASSERT_TRUE(limits.Take(Budget::kHeartbeat, "n").ok());
  EXPECT_FALSE(limits.Take(Budget::kHeartbeat, "n").ok());
  now_ += absl::Milliseconds(500);  // one heartbeat's worth at 2/s
  EXPECT_TRUE(limits.Take(Budget::kHeartbeat, "n").ok());
  EXPECT_FALSE(limits.Take(Budget::kHeartbeat, "n").ok());
}

TEST_F(PrincipalLimitsTest, ZeroMeansNoLimit) {
  PrincipalLimitOptions options = Options();
  options.registrations_per_minute = 0;
  PrincipalLimits limits(options);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(limits.Take(Budget::kRegistration, "ops").ok());
  }
}

TEST_F(PrincipalLimitsTest, StreamsCountUntilClosed) {
  PrincipalLimits limits(Options());
  auto first = limits.OpenStream("k8s");
  auto second = limits.OpenStream("k8s");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(limits.OpenStream("k8s").status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(limits.OpenStream("slurm").ok());
  { auto closed = std::move(*first); }
  EXPECT_TRUE(limits.OpenStream("k8s").ok());
}

}  // namespace
}  // namespace ctxsel::server
