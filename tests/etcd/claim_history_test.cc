#include "tests/etcd/claim_history.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using Kind = Operation::Kind;

constexpr absl::Duration kTolerance = absl::Milliseconds(5);

Mono S(double seconds) { return absl::Seconds(seconds); }

// An acknowledged claim on `device` answered at `done`, expiring at `expiry`.
Operation Claimed(const std::string& id, const std::string& device, double done,
                  double expiry) {
  Operation op;
  op.kind = Kind::kClaim;
  op.claim_id = id;
  op.device = device;
  op.invoked = S(done) - absl::Milliseconds(10);
  op.completed = S(done);
  op.code = absl::StatusCode::kOk;
  op.duration = S(expiry - done);
  op.expiry = S(expiry);
  return op;
}

Operation Renewed(const std::string& id, double invoked, double done,
                  absl::StatusCode code, double duration, double expiry = 0) {
  Operation op;
  op.kind = Kind::kRenew;
  op.claim_id = id;
  op.invoked = S(invoked);
  op.completed = S(done);
  op.code = code;
  op.duration = S(duration);
  op.expiry = S(expiry);
  return op;
}

Operation Released(const std::string& id, double invoked, double done,
                   absl::StatusCode code) {
  Operation op;
  op.kind = Kind::kRelease;
  op.claim_id = id;
  op.invoked = S(invoked);
  op.completed = S(done);
  op.code = code;
  return op;
}

ClaimCheck Check(const std::vector<Operation>& ops, int capacity = 1) {
  return CheckClaims(ops, {{"n/gpu0", capacity}}, kTolerance);
}

TEST(ClaimHistoryTest, OverlappingClaimsBeyondCapacityAreAViolation) {
  ClaimCheck check =
      Check({Claimed("a", "n/gpu0", 1, 4), Claimed("b", "n/gpu0", 2, 5)});
  ASSERT_THAT(check.violations, SizeIs(1));
  EXPECT_THAT(check.violations[0], HasSubstr("held by 2 certain claims"));
  EXPECT_EQ(check.max_holders["n/gpu0"], 2);
}

TEST(ClaimHistoryTest, ClaimsAfterExpiryOrReleaseAreNot) {
  EXPECT_THAT(
      Check({Claimed("a", "n/gpu0", 1, 4), Claimed("b", "n/gpu0", 4.001, 7)})
          .violations,
      IsEmpty());
  // A release ends the claim from its invocation, whatever it answered.
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 4),
                     Released("a", 2, 2.5, absl::StatusCode::kUnavailable),
                     Claimed("b", "n/gpu0", 2.2, 7)})
                  .violations,
              IsEmpty());
  // Within the tolerance of the expiry: not certain.
  EXPECT_THAT(
      Check({Claimed("a", "n/gpu0", 1, 4), Claimed("b", "n/gpu0", 3.997, 7)})
          .violations,
      IsEmpty());
  EXPECT_THAT(
      Check({Claimed("a", "n/gpu0", 1, 4), Claimed("b", "n/gpu0", 3.95, 7)})
          .violations,
      SizeIs(1));
}

TEST(ClaimHistoryTest, CapacityTwoHoldsTwo) {
  const std::vector<Operation> two = {Claimed("a", "n/gpu0", 1, 4),
                                      Claimed("b", "n/gpu0", 2, 5)};
  ClaimCheck check = Check(two, 2);
  EXPECT_THAT(check.violations, IsEmpty());
  EXPECT_EQ(check.max_holders["n/gpu0"], 2);
  std::vector<Operation> three = two;
  three.push_back(Claimed("c", "n/gpu0", 3, 6));
  EXPECT_THAT(Check(three, 2).violations, SizeIs(1));
}

TEST(ClaimHistoryTest, AnAcknowledgedRenewalExtendsTheHolding) {
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 3),
                     Renewed("a", 2, 2.1, absl::StatusCode::kOk, 3, 5),
                     Claimed("b", "n/gpu0", 4, 7)})
                  .violations,
              SizeIs(1));
  // A renewal answered after the expiry it extends leaves a gap.
  EXPECT_THAT(
      CertainHoldings({Claimed("a", "n/gpu0", 1, 3),
                       Renewed("a", 2.5, 3.5, absl::StatusCode::kOk, 3, 6)},
                      absl::ZeroDuration()),
      SizeIs(2));
  // A later renewal to an earlier expiry shortens it from its invocation.
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 10),
                     Renewed("a", 2, 2.1, absl::StatusCode::kOk, 1, 3),
                     Claimed("b", "n/gpu0", 4, 7)})
                  .violations,
              IsEmpty());
}

TEST(ClaimHistoryTest, ARenewalWithoutAnAnswerMayHaveShortenedTheClaim) {
  // Timed out asking for 1 s at 2: from 3 on the claim may be over.
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 10),
                     Renewed("a", 2, 4, absl::StatusCode::kDeadlineExceeded, 1),
                     Claimed("b", "n/gpu0", 4, 7)})
                  .violations,
              IsEmpty());
  // ... but not before.
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 10),
                     Renewed("a", 2, 4, absl::StatusCode::kDeadlineExceeded, 1),
                     Claimed("b", "n/gpu0", 2.5, 7)})
                  .violations,
              SizeIs(1));
}

TEST(ClaimHistoryTest, NotFoundForACertainlyHeldClaimIsAViolation) {
  ClaimCheck check =
      Check({Claimed("a", "n/gpu0", 1, 3),
             Renewed("a", 2, 2.1, absl::StatusCode::kOk, 3, 5),
             Renewed("a", 4, 4.1, absl::StatusCode::kNotFound, 3)});
  ASSERT_THAT(check.violations, SizeIs(1));
  EXPECT_THAT(check.violations[0], HasSubstr("claim a on n/gpu0"));
  // After the expiry it is fine.
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 3),
                     Renewed("a", 2.9, 3.1, absl::StatusCode::kNotFound, 3)})
                  .violations,
              IsEmpty());
  // A release hearing NOT_FOUND does not excuse itself.
  EXPECT_THAT(Check({Claimed("a", "n/gpu0", 1, 3),
                     Released("a", 2, 2.1, absl::StatusCode::kNotFound)})
                  .violations,
              SizeIs(1));
}

TEST(ClaimHistoryTest, AClaimingSelectIsNeverInvalidArgument) {
  Operation refused;
  refused.kind = Kind::kClaim;
  refused.code = absl::StatusCode::kInvalidArgument;
  refused.message = "etcdserver: duplicate key given in txn request";
  ClaimCheck check = Check({refused});
  ASSERT_THAT(check.violations, SizeIs(1));
  EXPECT_THAT(check.violations[0], HasSubstr("INVALID_ARGUMENT"));
}

TEST(ClaimHistoryTest, HistoryKeepsEveryOperation) {
  History history;
  history.Add(Claimed("a", "n/gpu0", 1, 3));
  history.Add(Released("a", 2, 2.1, absl::StatusCode::kOk));
  std::vector<Kind> kinds;
  for (const Operation& op : history.operations()) kinds.push_back(op.kind);
  EXPECT_THAT(kinds, ElementsAre(Kind::kClaim, Kind::kRelease));
}

}  // namespace
}  // namespace ctxsel::testing
