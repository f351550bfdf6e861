#include "server/store_health.h"

#include <vector>

#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

// Writes fail while `fail` is set.
class FlakyStore final : public Store {
 public:
  bool fail = false;
  absl::StatusOr<StoreContents> Load() override { return StoreContents{}; }
  absl::Status Apply(const StoreBatch&) override { return Result(); }
  absl::StatusOr<StoreSummary> Backup(const std::string&) override {
    return StoreSummary{};
  }
  std::string Describe() const override { return "flaky"; }
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override {
    return std::vector<ClaimRecord>{};
  }
  absl::Status ApplyClaims(const ClaimBatch&) override { return Result(); }

 private:
  absl::Status Result() const {
    return fail ? absl::ResourceExhaustedError("disk full") : absl::OkStatus();
  }
};

TEST(StoreHealthTest, FailedWritesMakeItUnavailableUntilOneSucceeds) {
  auto flaky = std::make_unique<FlakyStore>();
  FlakyStore* raw = flaky.get();
  std::vector<bool> flips;
  StoreHealth store(std::move(flaky), [&](bool ok) { flips.push_back(ok); });
  EXPECT_TRUE(store.available());
  EXPECT_TRUE(store.Apply({}).ok());
  raw->fail = true;
  EXPECT_EQ(store.Apply({}).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(store.available());
  EXPECT_FALSE(store.ApplyClaims({}).ok());  // no second flip
  raw->fail = false;
  EXPECT_TRUE(store.ApplyClaims({}).ok());
  EXPECT_TRUE(store.available());
  EXPECT_EQ(flips, (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace ctxsel::server
