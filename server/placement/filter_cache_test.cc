#include "server/placement/filter_cache.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server::placement {
namespace {

TEST(FilterCacheTest, ParsesOnceUpToCapacity) {
  FilterCache cache(2);
  absl::StatusOr<selector::Selector> a = cache.Get("device={kind(gpu)}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->ToString(), "device={kind(gpu)}");
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_TRUE(cache.Get("device={kind(gpu)}").ok());
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_TRUE(cache.Get("device={kind(cpu)}").ok());
  ASSERT_TRUE(cache.Get("device={arch(nvptx)}").ok());  // parsed, not kept
  EXPECT_EQ(cache.size(), 2u);
}

TEST(FilterCacheTest, ErrorsNameTheFieldAndAreNotCached) {
  FilterCache cache(4);
  absl::StatusOr<selector::Selector> bad = cache.Get("device={kind(gpu)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::StartsWith("device_filter: 1:"));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace ctxsel::server::placement
