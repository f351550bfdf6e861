#include "server/claims/claims.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer_test_util.h"
#include "server/store/sqlite_store.h"

namespace ctxsel::server {
namespace {

using placement::testing::Kind;
using placement::testing::MakeDevice;
using placement::testing::SaxpyJob;
using placement::testing::SaxpyVariants;
using ::testing::HasSubstr;

constexpr absl::Duration kFiveMinutes = absl::Minutes(5);

class ClaimBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(std::getenv("TEST_TMPDIR")) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(placer_.SetVariants("saxpy", SaxpyVariants()).ok());
    Reopen();
  }
  // A new store and book on the same directory: a server restart.
  void Reopen() {
    book_.reset();
    store_.reset();
    auto store = SqliteStore::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    ClaimOptions options;
    options.now = [this] { return now_; };
    options.max_duration = absl::Hours(1);
    auto book = ClaimBook::Open(store_.get(), options);
    ASSERT_TRUE(book.ok()) << book.status();
    book_ = *std::move(book);
  }
  // `n` H100s on node "n".
  void AddGpus(int n, int32_t capacity = 1) {
    std::vector<Device> devices;
    for (int i = 0; i < n; ++i) {
      devices.push_back(MakeDevice("n", i, Kind::kH100));
      devices.back().properties.claim_capacity = capacity;
    }
    ASSERT_TRUE(placer_.SetNodeDevices("n", devices).ok());
  }
  // The claimed device's id, or the status.
  std::string ClaimOne(absl::Duration d = kFiveMinutes) {
    auto c = book_->SelectAndClaim(placer_, SaxpyJob(), d, "alice@n:1");
    if (!c.ok()) {
      last_status_ = c.status();
      return c.status().ToString(absl::StatusToStringMode::kWithNoExtraData);
    }
    EXPECT_EQ(c->claim.device, c->placement.choice.device.id);
    last_ = c->claim;
    return c->claim.device;
  }

  absl::Status last_status_;  // ClaimOne's last refusal
  std::string dir_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  placement::Placer placer_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<ClaimBook> book_;
  Claim last_;
};

TEST_F(ClaimBookTest, EachDeviceOnceUntilReleasedOrExpired) {
  AddGpus(2);
  EXPECT_EQ(ClaimOne(), "n/0");
  const std::string first = last_.id;
  now_ += absl::Seconds(10);
  EXPECT_EQ(ClaimOne(), "n/1");
  EXPECT_EQ(ClaimOne(),
            "RESOURCE_EXHAUSTED: all 2 fitting devices are claimed; the first "
            "claim expires at 2023-11-14T22:18:20Z (in 4m50s)");
  // For programs: the reason and the same instant, RFC 3339.
  auto info = GetDetail<google::rpc::ErrorInfo>(last_status_);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), kReasonClaimsExhausted);
  EXPECT_EQ(info->metadata().at("first_expiry"), "2023-11-14T22:18:20Z");
  EXPECT_EQ(info->metadata().at("fitting"), "2");
  ASSERT_TRUE(book_->Release(first).ok());
  EXPECT_EQ(ClaimOne(), "n/0");
  EXPECT_EQ(book_->Release(first).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(book_->expired_count(), 0);  // a release is not an expiry
  // Both claims end 5 minutes after they were made.
  now_ += kFiveMinutes;
  EXPECT_EQ(book_->List("").size(), 0u);
  EXPECT_EQ(ClaimOne(), "n/0");
  EXPECT_EQ(book_->expired_count(), 2);
  EXPECT_EQ(ClaimOne(), "n/1");
}

// count = N takes N claims together, one per rank, or none at all.
TEST_F(ClaimBookTest, CountClaimsAllRanksAtOnceOrNone) {
  AddGpus(3);
  Job job = SaxpyJob();
  job.count = 2;
  auto c = book_->SelectAndClaim(placer_, job, kFiveMinutes, "slurm-9.0");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->rank_claims.size(), 2u);
  ASSERT_EQ(c->placement.ranks.size(), 2u);
  for (size_t rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(c->rank_claims[rank].device, c->placement.ranks[rank].device.id);
  }
  EXPECT_NE(c->rank_claims[0].device, c->rank_claims[1].device);
  EXPECT_EQ(c->claim.id, c->rank_claims[0].id);
  // One GPU is left: a second pair is refused whole and claims nothing.
  auto refused =
      book_->SelectAndClaim(placer_, job, kFiveMinutes, "slurm-10.0");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the devices fit, but only 1 of them have claim room"));
  EXPECT_EQ(book_->List("").size(), 2u);
  job.count = 4;  // more than the fleet has: no point waiting
  refused = book_->SelectAndClaim(placer_, job, kFiveMinutes, "slurm-11.0");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
}

// A launcher's epilog ends every claim of its job by holder, once.
TEST_F(ClaimBookTest, ReleaseHolderEndsEveryClaimOfTheHolder) {
  AddGpus(3);
  Job job = SaxpyJob();
  job.count = 2;
  ASSERT_TRUE(
      book_->SelectAndClaim(placer_, job, kFiveMinutes, "slurm-9.0", "ann")
          .ok());
  ASSERT_TRUE(book_
                  ->SelectAndClaim(placer_, SaxpyJob(), kFiveMinutes,
                                   "slurm-10.0", "bob")
                  .ok());
  auto anyone = [](const Claim&) { return true; };
  auto only_ann = [](const Claim& c) { return c.owner == "ann"; };
  auto denied = book_->ReleaseHolder("slurm-10.0", only_ann);
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(book_->List("").size(), 3u);
  auto released = book_->ReleaseHolder("slurm-9.0", only_ann);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(*released, 2);
  EXPECT_EQ(book_->List("").size(), 1u);
  released = book_->ReleaseHolder("slurm-9.0", anyone);  // idempotent
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, 0);
  Reopen();  // the release was stored
  EXPECT_EQ(book_->List("").size(), 1u);
}

TEST_F(ClaimBookTest, CapacityLetsClaimsShareADevice) {
  AddGpus(1, /*capacity=*/3);
  EXPECT_EQ(ClaimOne(), "n/0");
  EXPECT_EQ(ClaimOne(), "n/0");
  EXPECT_EQ(ClaimOne(), "n/0");
  EXPECT_THAT(ClaimOne(), HasSubstr("all 1 fitting devices are claimed"));
  EXPECT_EQ(book_->List("n").size(), 3u);
  EXPECT_EQ(book_->List("other").size(), 0u);
}

TEST_F(ClaimBookTest, RenewMovesTheExpiry) {
  AddGpus(1);
  EXPECT_EQ(ClaimOne(), "n/0");
  const std::string id = last_.id;
  now_ += absl::Minutes(4);
  auto renewed = book_->Renew(id, kFiveMinutes);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_EQ(renewed->expires, now_ + kFiveMinutes);
  now_ += absl::Minutes(4);  // 8 minutes after the claim: still held
  EXPECT_THAT(ClaimOne(), HasSubstr("(in 1m)"));
  now_ += absl::Minutes(1);
  EXPECT_EQ(book_->Renew(id, kFiveMinutes).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ClaimOne(), "n/0");
}

TEST_F(ClaimBookTest, ClaimsSurviveARestartAndExpiredOnesAreDropped) {
  AddGpus(2);
  EXPECT_EQ(ClaimOne(absl::Minutes(1)), "n/0");
  EXPECT_EQ(ClaimOne(absl::Minutes(10)), "n/1");
  const Claim kept = last_;
  Reopen();
  std::vector<Claim> listed = book_->List("");
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].id, kept.id);
  EXPECT_EQ(listed[1].holder, "alice@n:1");
  EXPECT_EQ(listed[1].expires, kept.expires);
  EXPECT_THAT(ClaimOne(), HasSubstr("all 2 fitting devices are claimed"));

  now_ += absl::Minutes(2);  // the first has expired across this restart
  Reopen();
  auto stored = store_->LoadClaims();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].id, kept.id);
  EXPECT_EQ(ClaimOne(), "n/0");
  EXPECT_THAT(ClaimOne(), HasSubstr("claimed"));
}

TEST_F(ClaimBookTest, BadRequestsNameTheField) {
  AddGpus(1);
  auto c =
      book_->SelectAndClaim(placer_, SaxpyJob(), absl::ZeroDuration(), "alice");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "claim.duration: 0 (must be > 0 and at most 1h)");
  EXPECT_EQ(GetDetail<google::rpc::BadRequest>(c.status())
                ->field_violations(0)
                .field(),
            "claim.duration");
  c = book_->SelectAndClaim(placer_, SaxpyJob(), absl::Hours(2), "alice");
  EXPECT_THAT(c.status().message(), HasSubstr("claim.duration: 2h"));
  c = book_->SelectAndClaim(placer_, SaxpyJob(), kFiveMinutes, "");
  EXPECT_EQ(c.status().message(), "claim.holder: empty");
  EXPECT_EQ(GetDetail<google::rpc::BadRequest>(c.status())
                ->field_violations(0)
                .field(),
            "claim.holder");
  // A holder is printed in `claims ls`: no terminal escapes in it.
  c = book_->SelectAndClaim(placer_, SaxpyJob(), kFiveMinutes,
                            "eve\x1b]0;owned\x07");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(),
              HasSubstr("claim.holder: control character"));
  EXPECT_EQ(book_->Renew("c-nope", kFiveMinutes).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(book_->Release("c-nope").message(),
              HasSubstr("claim_id: 'c-nope'"));
  // Errors of the Select itself pass through.
  Job unknown;
  unknown.kernel = "nope";
  EXPECT_EQ(book_->SelectAndClaim(placer_, unknown, kFiveMinutes, "a")
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

// Many launchers at once: each device is handed out at most once.
TEST_F(ClaimBookTest, ConcurrentClaimsNeverShareADevice) {
  constexpr int kDevices = 8;
  constexpr int kLaunchers = 32;
  AddGpus(kDevices);
  absl::Mutex mu;
  std::multiset<std::string> claimed;
  int exhausted = 0;
  std::vector<std::thread> launchers;
  for (int i = 0; i < kLaunchers; ++i) {
    launchers.emplace_back([&] {
      auto c = book_->SelectAndClaim(placer_, SaxpyJob(), kFiveMinutes, "x");
      absl::MutexLock lock(&mu);
      if (c.ok()) {
        claimed.insert(c->claim.device);
      } else if (absl::IsResourceExhausted(c.status())) {
        ++exhausted;
      }
    });
  }
  for (std::thread& t : launchers) t.join();
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kDevices));
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(),
            static_cast<size_t>(kDevices));
  EXPECT_EQ(exhausted, kLaunchers - kDevices);
}

}  // namespace
}  // namespace ctxsel::server
