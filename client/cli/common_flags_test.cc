#include "client/cli/common_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
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

}  // namespace
}  // namespace ctxsel::cli
