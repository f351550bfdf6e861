#include "base/policy_names.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every ctxsel.v1.Policy but UNSPECIFIED has a line of policy.def, and its
// name is the enum's, lower case, without POLICY_: the rule the Python
// package maps names by.
TEST(PolicyNamesTest, EveryProtoValueHasItsName) {
  const google::protobuf::EnumDescriptor* policies = v1::Policy_descriptor();
  int named = 0;
  for (int i = 0; i < policies->value_count(); ++i) {
    const auto value = static_cast<v1::Policy>(policies->value(i)->number());
    if (value == v1::POLICY_UNSPECIFIED) {
      EXPECT_EQ(PolicyNameOf(value), "");
      continue;
    }
    const absl::string_view name = PolicyNameOf(value);
    EXPECT_EQ(absl::StrCat("POLICY_", absl::AsciiStrToUpper(name)),
              policies->value(i)->name());
    absl::StatusOr<v1::Policy> parsed = ParsePolicyName(name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, value);
    ++named;
  }
  EXPECT_EQ(named, static_cast<int>(PolicyNames().size()));
  EXPECT_THAT(PolicyNames(), ElementsAre("least_loaded", "spread", "pack"));
}

TEST(PolicyNamesTest, UnknownNameListsKnownOnes) {
  for (const char* name : {"random", "SPREAD", "unspecified", ""}) {
    absl::StatusOr<v1::Policy> parsed = ParsePolicyName(name);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("(known: least_loaded, spread, pack)"));
  }
}

}  // namespace
}  // namespace ctxsel
