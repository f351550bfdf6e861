#include "client/cli/common_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

absl::StatusOr<JobVariables> Parse(std::vector<std::string> assignments) {
  absl::SetFlag(&FLAGS_var, std::move(assignments));
  return JobVariablesFromFlags();
}

TEST(JobVariablesFromFlagsTest, NameEqualsIntegerInOrder) {
  absl::StatusOr<JobVariables> vars = Parse({"N=4096", "tasking=1", "d=-2"});
  ASSERT_TRUE(vars.ok()) << vars.status();
  EXPECT_EQ(*vars, (JobVariables{{"N", 4096}, {"tasking", 1}, {"d", -2}}));
  vars = Parse({});
  ASSERT_TRUE(vars.ok());
  EXPECT_TRUE(vars->empty());
}

TEST(JobVariablesFromFlagsTest, RejectsOtherSpellingsNamingTheAssignment) {
  for (const std::string bad : {"N", "N=", "N=x", "=4", "N=1.5"}) {
    absl::StatusOr<JobVariables> vars = Parse({"M=1", bad});
    ASSERT_FALSE(vars.ok()) << bad;
    EXPECT_EQ(vars.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(vars.status().message(),
              "--var: '" + bad + "' is not NAME=INTEGER");
  }
}

TEST(JobVariablesFromFlagsTest, RejectsARangeNamingItsSecondValue) {
  absl::StatusOr<JobVariables> vars = Parse({"N=1", "64"});
  ASSERT_FALSE(vars.ok());
  EXPECT_EQ(vars.status().message(), "--var: '64' is not NAME=INTEGER");
}

TEST(VariableRangesFromFlagsTest, IntegersContinueTheNamedList) {
  absl::SetFlag(&FLAGS_var,
                std::vector<std::string>{"N=1", "64", "4096", "M=2", "-3"});
  absl::StatusOr<VariableRanges> ranges = VariableRangesFromFlags();
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  EXPECT_EQ(*ranges, (VariableRanges{{"N", {1, 64, 4096}}, {"M", {2, -3}}}));
}

TEST(VariableRangesFromFlagsTest, RejectsALeadingValueAndARepeatedName) {
  absl::SetFlag(&FLAGS_var, std::vector<std::string>{"64", "N=1"});
  EXPECT_EQ(VariableRangesFromFlags().status().message(),
            "--var: '64' is not NAME=INTEGER");
  absl::SetFlag(&FLAGS_var, std::vector<std::string>{"N=1", "N=2"});
  EXPECT_EQ(VariableRangesFromFlags().status().message(),
            "--var: 'N' is given twice");
}

TEST(CallTimeoutFromFlagsTest, RoundsUpToWholeMilliseconds) {
  absl::SetFlag(&FLAGS_timeout, absl::Milliseconds(300));
  EXPECT_EQ(CallTimeoutFromFlags().value(), std::chrono::milliseconds(300));
  absl::SetFlag(&FLAGS_timeout, absl::Microseconds(1500));
  EXPECT_EQ(CallTimeoutFromFlags().value(), std::chrono::milliseconds(2));
  absl::SetFlag(&FLAGS_timeout, absl::Minutes(2));
  EXPECT_EQ(CallTimeoutFromFlags().value(), std::chrono::minutes(2));
}

TEST(CallTimeoutFromFlagsTest, RejectsNonPositiveAndInfiniteNamingTheFlag) {
  for (absl::Duration bad :
       {absl::ZeroDuration(), absl::Seconds(-1), absl::InfiniteDuration()}) {
    absl::SetFlag(&FLAGS_timeout, bad);
    absl::StatusOr<std::chrono::milliseconds> timeout = CallTimeoutFromFlags();
    ASSERT_FALSE(timeout.ok()) << bad;
    EXPECT_EQ(timeout.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(timeout.status().message(),
              "--timeout: must be a positive, finite duration, got " +
                  absl::FormatDuration(bad));
  }
  absl::SetFlag(&FLAGS_timeout, absl::Seconds(5));
}

}  // namespace
}  // namespace ctxsel::cli
