// select/explain read --policy by the names of base/policy.def (the proto's
// Policy names in lower case, unprefixed); a bad value is bad input before
// any connection is tried.
#include "client/cli/select_command.h"

#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/policy_names.h"
#include "client/cli/command.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

void SetFlag(const char* name, const std::string& value) {
  std::string error;
  ASSERT_TRUE(absl::FindCommandLineFlag(name)->ParseFrom(value, &error))
      << error;
}

int RunSelect(const std::string& policy) {
  absl::FlagSaver saver;
  SetFlag("kernel", "saxpy");
  // Nothing listens on port 1: a valid job fails only when connecting.
  SetFlag("server", "127.0.0.1:1");
  SetFlag("policy", policy);
  return kSelectCommand.run({});
}

TEST(SelectCommandTest, PoliciesAreTheProtoNamesInLowerCaseUnprefixed) {
  for (const char* policy : {"least_loaded", "spread", "pack"}) {
    EXPECT_EQ(RunSelect(policy), kExitUnreachable) << policy;
  }
}

TEST(SelectCommandTest, OtherPolicySpellingsAreBadInput) {
  for (const char* policy :
       {"bogus", "SPREAD", "policy_spread", "POLICY_SPREAD", "unspecified",
        "policy_unspecified", "POLICY_UNSPECIFIED", ""}) {
    EXPECT_EQ(RunSelect(policy), kExitBadInput) << policy;
  }
}

// The usage line is a compile-time string, so it spells the names again:
// held to the table here.
TEST(SelectCommandTest, UsageAndHelpNameEveryPolicyOfTheTable) {
  const std::string names = absl::StrJoin(PolicyNames(), "|");
  EXPECT_NE(std::string(CTXSEL_CLI_JOB_FLAGS)
                .find(absl::StrCat("[--policy=", names, "]")),
            std::string::npos)
      << CTXSEL_CLI_JOB_FLAGS;
  EXPECT_NE(absl::FindCommandLineFlag("policy")->Help().find(
                absl::StrJoin(PolicyNames(), ", ")),
            std::string::npos);
}

}  // namespace
}  // namespace ctxsel::cli
