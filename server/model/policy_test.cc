#include "server/model/policy.h"

#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

TEST(PolicyTest, NamesRoundTrip) {
  ASSERT_EQ(AllPolicies().size(), 3u);
  for (Policy policy : AllPolicies()) {
    absl::StatusOr<Policy> parsed = ParsePolicy(PolicyName(policy));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, policy);
    EXPECT_FALSE(PolicyMeaning(policy).empty());
  }
  EXPECT_EQ(PolicyName(Policy::kLeastLoaded), "least_loaded");
  EXPECT_EQ(PolicyName(Policy::kSpread), "spread");
  EXPECT_EQ(PolicyName(Policy::kPack), "pack");
}

TEST(PolicyTest, UnknownNameListsKnownOnes) {
  absl::StatusOr<Policy> parsed = ParsePolicy("random");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("least_loaded, spread, pack"),
            std::string::npos)
      << parsed.status();
}

}  // namespace
}  // namespace ctxsel::server
