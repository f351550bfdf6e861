#include "base/proto_time.h"

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(ProtoTimeTest, DurationsRoundTripExactly) {
  for (absl::Duration d :
       {absl::ZeroDuration(), absl::Milliseconds(1500), absl::Nanoseconds(1),
        -absl::Milliseconds(1500), absl::Hours(24)}) {
    google::protobuf::Duration p = ToProtoDuration(d);
    EXPECT_EQ(FromProtoDuration(p), d) << d;
    EXPECT_FALSE((p.seconds() > 0 && p.nanos() < 0) ||
                 (p.seconds() < 0 && p.nanos() > 0))
        << d;
  }
  google::protobuf::Duration p = ToProtoDuration(-absl::Milliseconds(1500));
  EXPECT_EQ(p.seconds(), -1);
  EXPECT_EQ(p.nanos(), -500000000);
  EXPECT_EQ(ToProtoDuration(absl::InfiniteDuration()).seconds(), 315576000000);
}

TEST(ProtoTimeTest, BadRequestDurationsNameTheField) {
  google::protobuf::Duration mixed;
  mixed.set_seconds(1);
  mixed.set_nanos(-1);
  absl::StatusOr<absl::Duration> d = DurationFromProto(mixed, "claim.duration");
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              ::testing::StartsWith("claim.duration: "));
  EXPECT_EQ(GetDetail<google::rpc::BadRequest>(d.status())
                ->field_violations(0)
                .field(),
            "claim.duration");
  google::protobuf::Duration nanos;
  nanos.set_nanos(1'000'000'000);
  EXPECT_FALSE(DurationFromProto(nanos, "duration").ok());
  google::protobuf::Duration ok;
  ok.set_seconds(60);
  EXPECT_EQ(*DurationFromProto(ok, "duration"), absl::Minutes(1));
}

TEST(ProtoTimeTest, TimestampsRoundTripAndNeverIsEmpty) {
  const absl::Time t = absl::FromUnixMillis(1'700'000'000'123);
  google::protobuf::Timestamp p = ToProtoTimestamp(t);
  EXPECT_EQ(p.seconds(), 1'700'000'000);
  EXPECT_EQ(p.nanos(), 123'000'000);
  EXPECT_EQ(FromProtoTimestamp(p), t);
  google::protobuf::Timestamp never = ToProtoTimestamp(absl::InfinitePast());
  EXPECT_EQ(never.seconds(), 0);
  EXPECT_EQ(never.nanos(), 0);
}

}  // namespace
}  // namespace ctxsel
