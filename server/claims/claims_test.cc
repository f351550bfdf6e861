#include "server/claims/claims.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
    options.quotas = [this](const std::string& owner,
                            const std::string& holder) {
      std::vector<ClaimQuota> out;
      for (const ClaimQuota& q : quotas_) {
        if (q.holder_prefix.empty()
                ? q.owner == owner
                : absl::StartsWith(holder, q.holder_prefix)) {
          out.push_back(q);
        }
      }
      return out;
    };
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

  std::vector<ClaimQuota> quotas_;  // what ClaimOptions::quotas answers
  absl::Status last_status_;        // ClaimOne's last refusal
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

// --- Shares and quotas (issue 24) ---

TEST_F(ClaimBookTest, SharesNeverOverCommitAndSurviveARestart) {
  std::vector<Device> devices = {MakeDevice("n", 0, Kind::kH100)};
  devices[0].properties.memory_bytes = uint64_t{80} << 30;
  ASSERT_TRUE(placer_.SetNodeDevices("n", devices).ok());
  Job share = SaxpyJob();
  share.share.memory_bytes = uint64_t{20} << 30;
  auto claim = [&](const Job& job) {
    return book_->SelectAndClaim(placer_, job, kFiveMinutes, "s", "alice");
  };
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    auto c = claim(share);
    ASSERT_TRUE(c.ok()) << i << ": " << c.status();
    EXPECT_EQ(c->claim.share.memory_bytes, uint64_t{20} << 30);
    ids.push_back(c->claim.id);
  }
  EXPECT_EQ(claim(share).status().code(), absl::StatusCode::kResourceExhausted);
  // The whole device is not free, and shares are not free while it is held.
  EXPECT_EQ(claim(SaxpyJob()).status().code(),
            absl::StatusCode::kResourceExhausted);
  Reopen();  // SQLite keeps the shares
  EXPECT_EQ(claim(share).status().code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(book_->Release(ids[0]).ok());
  Job compute = SaxpyJob();
  compute.share.compute_percent = 60;
  EXPECT_TRUE(claim(compute).ok());  // 20 GiB left; no compute used yet
  compute.share.compute_percent = 50;
  EXPECT_EQ(claim(compute).status().code(),
            absl::StatusCode::kResourceExhausted);  // 60 + 50 > 100
  for (const Claim& c : book_->List("")) ASSERT_TRUE(book_->Release(c.id).ok());
  EXPECT_TRUE(claim(SaxpyJob()).ok());
  EXPECT_EQ(claim(share).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(ClaimBookTest, QuotasCapLiveClaimsAndDeviceHours) {
  AddGpus(4);
  quotas_ = {{"alice", "", /*max_claims=*/2, 0},
             {"", "job7.", /*max_claims=*/1, 0},
             {"bob", "", 0, /*max_device_hours=*/1}};
  auto claim = [&](const std::string& owner, const std::string& holder,
                   absl::Duration d) {
    return book_->SelectAndClaim(placer_, SaxpyJob(), d, holder, owner);
  };
  ASSERT_TRUE(claim("alice", "a1", kFiveMinutes).ok());
  ASSERT_TRUE(claim("alice", "a2", kFiveMinutes).ok());
  auto over = claim("alice", "a3", kFiveMinutes);
  ASSERT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(),
              HasSubstr("principal 'alice' holds 2 live claims of at most 2"));
  auto info = GetDetail<google::rpc::ErrorInfo>(over.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), kReasonClaimQuotaExceeded);
  EXPECT_EQ(info->metadata().at("scope"), "principal");
  // Another principal is not capped by alice's quota; a holder prefix caps
  // whoever claims for it.
  auto carol = claim("carol", "job7.0", kFiveMinutes);
  ASSERT_TRUE(carol.ok());
  auto again = claim("dave", "job7.1", kFiveMinutes);
  EXPECT_THAT(again.status().message(), HasSubstr("holders 'job7.*'"));
  // Device-hours: the time left on live claims, plus what is asked.
  auto b1 = claim("bob", "b", absl::Minutes(40));
  ASSERT_TRUE(b1.ok());
  EXPECT_THAT(claim("bob", "b", absl::Minutes(40)).status().message(),
              HasSubstr("device-hours"));
  EXPECT_EQ(book_->Renew(b1->claim.id, absl::Minutes(59)).status().code(),
            absl::StatusCode::kOk);
  EXPECT_EQ(book_->Renew(b1->claim.id, absl::Minutes(61)).status().code(),
            absl::StatusCode::kInvalidArgument);  // over max_duration (1 h)
  now_ += absl::Minutes(40);                      // 19 minutes left on b1
  EXPECT_TRUE(claim("bob", "b", absl::Minutes(40)).ok());
  // Ended claims no longer count (carol's expired 35 minutes ago).
  EXPECT_TRUE(claim("dave", "job7.1", kFiveMinutes).ok());
}

// --- Waiting in the queue (SelectAndClaimOrWait) ---

// One waiting call's answer, as the RPC edge would get it.
struct Answer {
  bool answered = false;
  absl::StatusOr<ClaimBook::Claimed> result = absl::UnknownError("none");
};

class ClaimWaitTest : public ClaimBookTest {
 protected:
  // Starts a wait; the answer lands in answers_[index].
  uint64_t Wait(Job job, int priority = 0,
                absl::Duration wait = absl::Minutes(1),
                const std::string& holder = "w") {
    const size_t index = answers_.size();
    answers_.push_back(std::make_unique<Answer>());
    Answer* answer = answers_[index].get();
    return book_->SelectAndClaimOrWait(
        placer_, job, kFiveMinutes, holder, "", {wait, priority},
        [answer](absl::StatusOr<ClaimBook::Claimed> result) {
          EXPECT_FALSE(answer->answered) << "answered twice";
          answer->answered = true;
          answer->result = std::move(result);
        });
  }
  // The indexes of the answered waits that got a claim, in answer order
  // is not kept: by index.
  std::vector<int> Granted() const {
    std::vector<int> out;
    for (size_t i = 0; i < answers_.size(); ++i) {
      if (answers_[i]->answered && answers_[i]->result.ok()) out.push_back(i);
    }
    return out;
  }
  std::string DeviceOf(int index) const {
    const Answer& a = *answers_[index];
    return a.result.ok() ? a.result->claim.device
                         : a.result.status().ToString();
  }
  std::vector<std::unique_ptr<Answer>> answers_;
};

TEST_F(ClaimWaitTest, ImmediateAnswerWhenThereIsRoom) {
  AddGpus(1);
  EXPECT_EQ(Wait(SaxpyJob()), 0u);
  ASSERT_TRUE(answers_[0]->answered);
  EXPECT_EQ(DeviceOf(0), "n/0");
  EXPECT_EQ(book_->waiter_count(), 0);
}

TEST_F(ClaimWaitTest, ReleasesServeWaitersInArrivalOrder) {
  AddGpus(1);
  ASSERT_EQ(ClaimOne(), "n/0");
  std::string holding = last_.id;
  for (int i = 0; i < 4; ++i) {
    EXPECT_GT(Wait(SaxpyJob(), 0, absl::Minutes(1), absl::StrCat("w", i)), 0u);
  }
  EXPECT_THAT(Granted(), ::testing::IsEmpty());
  std::vector<Waiter> listed = book_->Waiters();
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_EQ(listed[0].holder, "w0");
  EXPECT_EQ(listed[3].holder, "w3");
  for (int i = 0; i < 4; ++i) {
    now_ += absl::Seconds(3);
    ASSERT_TRUE(book_->Release(holding).ok());
    ASSERT_EQ(Granted(), std::vector<int>(1, i)) << "release " << i;
    EXPECT_EQ(answers_[i]->result->waited, absl::Seconds(3) * (i + 1));
    holding = answers_[i]->result->claim.id;
    answers_[i]->result = absl::CancelledError("counted");  // off Granted()
  }
  EXPECT_EQ(book_->waiter_count(), 0);
}

TEST_F(ClaimWaitTest, HigherPriorityFirstAndANonFittingWaiterDoesNotBlock) {
  AddGpus(2);
  ASSERT_TRUE(
      placer_.SetNodeDevices("m", {MakeDevice("m", 0, Kind::kH100)}).ok());
  std::map<std::string, std::string> claim_of;  // device -> claim id
  for (int i = 0; i < 3; ++i) {
    const std::string device = ClaimOne();
    claim_of[device] = last_.id;
  }
  ASSERT_EQ(claim_of.size(), 3u);
  const std::string n0 = claim_of["n/0"], m0 = claim_of["m/0"];
  Job only_m = SaxpyJob();
  only_m.nodes = {"m"};
  Wait(only_m, 9);      // 0: first in the queue, but fits only m/0
  Wait(SaxpyJob(), 0);  // 1
  Wait(SaxpyJob(), 5);  // 2: ahead of 1
  EXPECT_THAT(book_->Waiters()[0].priority, 9);
  ASSERT_TRUE(book_->Release(n0).ok());
  EXPECT_EQ(Granted(), std::vector<int>({2}));  // 0 cannot use n/0
  ASSERT_TRUE(book_->Release(m0).ok());
  EXPECT_EQ(Granted(), std::vector<int>({0, 2}));  // 0 before 1 for m/0
  EXPECT_EQ(DeviceOf(0), "m/0");
}

TEST_F(ClaimWaitTest, ExpiryServesAtTickAndWaitsRunOut) {
  AddGpus(1);
  ASSERT_EQ(ClaimOne(absl::Seconds(30)), "n/0");
  Wait(SaxpyJob(), 0, absl::Seconds(60));  // 0: served when the claim expires
  Wait(SaxpyJob(), 0, absl::Seconds(40));  // 1: runs out
  now_ += absl::Seconds(31);
  book_->Tick();
  EXPECT_EQ(Granted(), std::vector<int>({0}));
  EXPECT_FALSE(answers_[1]->answered);
  now_ += absl::Seconds(10);
  book_->Tick();
  ASSERT_TRUE(answers_[1]->answered);
  const absl::Status& s = answers_[1]->result.status();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("waited 41s in the claim queue; all 1 "
                                     "fitting devices are claimed"));
  auto info = GetDetail<google::rpc::ErrorInfo>(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "CLAIM_WAIT_EXPIRED");
  EXPECT_EQ(book_->waiter_count(), 0);
}

TEST_F(ClaimWaitTest, CancelledWaiterLeavesTheQueue) {
  AddGpus(1);
  ASSERT_EQ(ClaimOne(), "n/0");
  const uint64_t first = Wait(SaxpyJob());
  Wait(SaxpyJob());
  book_->CancelWaiter(first, absl::CancelledError("gone"));
  EXPECT_TRUE(absl::IsCancelled(answers_[0]->result.status()));
  book_->CancelWaiter(first, absl::CancelledError("again"));  // nothing
  ASSERT_TRUE(book_->Release(last_.id).ok());
  EXPECT_EQ(Granted(), std::vector<int>({1}));
}

TEST_F(ClaimWaitTest, AddedDevicesServeWaitersAtTick) {
  AddGpus(1);
  ASSERT_EQ(ClaimOne(), "n/0");
  Wait(SaxpyJob());
  AddGpus(2);
  book_->Tick();  // no room freed and no change announced: not retried
  EXPECT_THAT(Granted(), ::testing::IsEmpty());
  book_->Tick(/*fleet_changed=*/true);
  EXPECT_EQ(DeviceOf(0), "n/1");
}

TEST_F(ClaimWaitTest, BoundsAndBadRequests) {
  ClaimOptions options;
  options.now = [this] { return now_; };
  options.queue.max_waiters = 2;
  auto book = ClaimBook::Open(store_.get(), options);
  ASSERT_TRUE(book.ok());
  book_ = *std::move(book);
  AddGpus(1);
  ASSERT_EQ(ClaimOne(), "n/0");
  EXPECT_GT(Wait(SaxpyJob()), 0u);
  EXPECT_GT(Wait(SaxpyJob()), 0u);
  EXPECT_EQ(Wait(SaxpyJob()), 0u);
  auto info = GetDetail<google::rpc::ErrorInfo>(answers_[2]->result.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "CLAIM_QUEUE_FULL");
  EXPECT_EQ(Wait(SaxpyJob(), 10), 0u);
  EXPECT_THAT(answers_[3]->result.status().message(),
              HasSubstr("claim.priority: 10"));
  EXPECT_EQ(Wait(SaxpyJob(), 0, absl::Hours(25)), 0u);
  EXPECT_THAT(answers_[4]->result.status().message(), HasSubstr("claim.wait"));
  EXPECT_EQ(book_->waiter_count(), 2);
}

// The starvation bound for a waiter of several devices: once promoted, the
// devices that free up gather for it instead of going one by one to the
// one-device waiters behind it (before, `small2` took the device released
// second and `pair` waited on).
TEST_F(ClaimWaitTest, APromotedWaiterForTwoDevicesIsNotStarvedByOnes) {
  ClaimOptions options;
  options.now = [this] { return now_; };
  options.queue.max_overtakes = 1;
  auto book = ClaimBook::Open(store_.get(), options);
  ASSERT_TRUE(book.ok());
  book_ = *std::move(book);
  AddGpus(2);
  ASSERT_EQ(ClaimOne(), "n/0");
  const std::string g0 = last_.id;
  ASSERT_EQ(ClaimOne(), "n/1");
  const std::string g1 = last_.id;
  Job pair = SaxpyJob();
  pair.count = 2;
  ASSERT_GT(Wait(pair, 0, absl::Minutes(1), "pair"), 0u);
  ASSERT_GT(Wait(SaxpyJob(), 0, absl::Minutes(1), "small1"), 0u);
  ASSERT_GT(Wait(SaxpyJob(), 0, absl::Minutes(1), "small2"), 0u);
  ASSERT_TRUE(book_->Release(g0).ok());
  // pair needs two: small1 takes n/0, and pair is overtaken (promoted).
  EXPECT_THAT(Granted(), ::testing::ElementsAre(1));
  ASSERT_TRUE(book_->Waiters().front().promoted);
  ASSERT_TRUE(book_->Release(g1).ok());
  // n/1 is kept for pair: small2 waits behind it.
  EXPECT_THAT(Granted(), ::testing::ElementsAre(1));
  // A new waiter queues behind it too, without taking n/1.
  ASSERT_GT(Wait(SaxpyJob(), 0, absl::Minutes(1), "late"), 0u);
  EXPECT_THAT(Granted(), ::testing::ElementsAre(1));
  ASSERT_TRUE(book_->Release(answers_[1]->result->claim.id).ok());
  EXPECT_THAT(Granted(), ::testing::ElementsAre(0, 1));
  EXPECT_EQ(answers_[0]->result->rank_claims.size(), 2u);
}

}  // namespace
}  // namespace ctxsel::server
