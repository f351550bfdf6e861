#include "server/model/page_token.h"

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;

TEST(PageTokenTest, RoundTripsAPosition) {
  const std::string filters = PageFilters({{"device_filter", "kind(gpu)"}});
  const std::string token =
      EncodePageToken("ListDevices", filters, {"node7", "3"});
  auto position = DecodePageToken(token, "ListDevices", filters, 2);
  ASSERT_TRUE(position.ok()) << position.status();
  EXPECT_THAT(*position, ElementsAre("node7", "3"));
}

TEST(PageTokenTest, GarbageIsInvalidArgumentNamingTheField) {
  for (const std::string& garbage :
       {std::string("garbage"), std::string("!!"), std::string("bm9kZTc")}) {
    auto position = DecodePageToken(garbage, "ListNodes", "", 1);
    ASSERT_EQ(position.status().code(), absl::StatusCode::kInvalidArgument)
        << garbage;
    auto bad = GetDetail<google::rpc::BadRequest>(position.status());
    ASSERT_TRUE(bad.has_value());
    EXPECT_EQ(bad->field_violations(0).field(), "page_token");
    EXPECT_EQ(GetDetail<google::rpc::ErrorInfo>(position.status())->reason(),
              "PAGE_TOKEN_INVALID");
  }
}

TEST(PageTokenTest, OtherFiltersOrListingAreRefused) {
  const std::string token = EncodePageToken(
      "ListDevices", PageFilters({{"device_filter", "kind(gpu)"}}), {"n", "1"});
  auto other_filters = DecodePageToken(
      token, "ListDevices", PageFilters({{"device_filter", "kind(cpu)"}}), 2);
  EXPECT_EQ(other_filters.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetDetail<google::rpc::ErrorInfo>(other_filters.status())->reason(),
            "PAGE_TOKEN_FILTERS_CHANGED");
  auto other_listing = DecodePageToken(
      token, "ListNodes", PageFilters({{"device_filter", "kind(gpu)"}}), 2);
  EXPECT_EQ(other_listing.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ctxsel::server
