#include "server/model/policy.h"

#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

// Parsing is base/policy_names.h's (policy_names_test).
TEST(PolicyTest, EveryPolicyHasANameAndAMeaning) {
  ASSERT_EQ(AllPolicies().size(), 3u);
  for (Policy policy : AllPolicies()) {
    EXPECT_FALSE(PolicyName(policy).empty());
    EXPECT_FALSE(PolicyMeaning(policy).empty());
  }
  EXPECT_EQ(PolicyName(Policy::kLeastLoaded), "least_loaded");
  EXPECT_EQ(PolicyName(Policy::kSpread), "spread");
  EXPECT_EQ(PolicyName(Policy::kPack), "pack");
}

}  // namespace
}  // namespace ctxsel::server
