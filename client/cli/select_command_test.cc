// select/explain read --policy by the proto's Policy names; a bad value is
// bad input before any connection is tried.
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
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

}  // namespace
}  // namespace ctxsel::cli
