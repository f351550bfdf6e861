#include "server/store/store_health.h"

#include <vector>

#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

// Writes fail while `fail` is set, with `failure`.
class FlakyStore final : public Store {
 public:
  bool fail = false;
  absl::Status failure = absl::ResourceExhaustedError("disk full");
  absl::StatusOr<StoreContents> Load() override { return StoreContents{}; }
  absl::StatusOr<int64_t> Apply(const StoreBatch&) override {
    absl::Status result = Result();
    if (!result.ok()) return result;
    return 1;
  }
  absl::StatusOr<StoreSummary> Backup(const std::string&) override {
    return StoreSummary{};
  }
  std::string Describe() const override { return "flaky"; }
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override {
    return std::vector<ClaimRecord>{};
  }
  absl::Status ApplyClaims(const ClaimBatch&) override { return Result(); }

 private:
  absl::Status Result() const { return fail ? failure : absl::OkStatus(); }
};

TEST(StoreHealthTest, FailedWritesMakeItUnavailableUntilOneSucceeds) {
  auto flaky = std::make_unique<FlakyStore>();
  FlakyStore* raw = flaky.get();
  std::vector<bool> flips;
  StoreHealth store(std::move(flaky), [&](bool ok) { flips.push_back(ok); });
  EXPECT_TRUE(store.available());
  EXPECT_TRUE(store.Apply({}).ok());
  raw->fail = true;
  EXPECT_EQ(store.Apply({}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(store.available());
  EXPECT_FALSE(store.ApplyClaims({}).ok());  // no second flip
  raw->fail = false;
  EXPECT_TRUE(store.ApplyClaims({}).ok());
  EXPECT_TRUE(store.available());
  EXPECT_EQ(flips, (std::vector<bool>{false, true}));
}

TEST(StoreHealthTest, AGuardThatRefusesAWriteIsAStoreThatWorks) {
  auto flaky = std::make_unique<FlakyStore>();
  FlakyStore* raw = flaky.get();
  std::vector<bool> flips;
  StoreHealth store(std::move(flaky), [&](bool ok) { flips.push_back(ok); });
  raw->fail = true;
  raw->failure = absl::AbortedError("another server changed kernel k first");
  EXPECT_EQ(store.Apply({}).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(store.ApplyClaims({}).code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(store.available());
  EXPECT_TRUE(flips.empty());
}

}  // namespace
}  // namespace ctxsel::server
