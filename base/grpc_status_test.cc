#include "base/grpc_status.h"

#include <string>

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

using ::testing::HasSubstr;

absl::Status Detailed() {
  return WithResourceInfo(WithErrorInfo(FieldViolation("job.top_k", "negative"),
                                        "BAD_TOP_K", {{"top_k", "-1"}}),
                          "ctxsel.v1.Job", "saxpy");
}

void ExpectDetails(const absl::Status& back) {
  auto bad = GetDetail<google::rpc::BadRequest>(back);
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->field_violations_size(), 1);
  EXPECT_EQ(bad->field_violations(0).field(), "job.top_k");
  auto info = GetDetail<google::rpc::ErrorInfo>(back);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "BAD_TOP_K");
  EXPECT_EQ(info->metadata().at("top_k"), "-1");
  auto resource = GetDetail<google::rpc::ResourceInfo>(back);
  ASSERT_TRUE(resource.has_value());
  EXPECT_EQ(resource->resource_name(), "saxpy");
}

TEST(GrpcStatusTest, DetailsSurviveTheRoundTrip) {
  const absl::Status back = FromGrpcStatus(ToGrpcStatus(Detailed()));
  EXPECT_EQ(back.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(back.message(), "job.top_k: negative");
  ExpectDetails(back);
}

// The agent's and the etcd client's form, with the call's name in front.
TEST(GrpcStatusTest, NamingTheCallKeepsTheDetails) {
  const absl::Status back =
      FromGrpcStatus(ToGrpcStatus(Detailed()), "ReportNode");
  EXPECT_EQ(back.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(back.message(), "ReportNode: job.top_k: negative");
  ExpectDetails(back);
}

TEST(GrpcStatusTest, OkAndDetaillessStatuses) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK, "Range").ok());
  // etcd sends no google.rpc details: code and message only.
  const absl::Status back =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "no leader"));
  EXPECT_EQ(back.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(back.message(), "no leader");
  EXPECT_FALSE(GetDetail<google::rpc::ErrorInfo>(back).has_value());
}

// Every error the server sends has an ErrorInfo, its code's name when the
// code set none.
TEST(GrpcStatusTest, EveryErrorGetsAnErrorInfo) {
  const absl::Status back =
      FromGrpcStatus(ToGrpcStatus(absl::NotFoundError("node: 'n1'")));
  auto info = GetDetail<google::rpc::ErrorInfo>(back);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "NOT_FOUND");
}

// A long message (a job naming 500 unknown nodes) is cut, so the trailers
// stay under gRPC's limit; the details survive.
TEST(GrpcStatusTest, LongErrorMessagesAreCutAndKeepTheirDetails) {
  absl::Status long_status = WithErrorInfo(
      absl::FailedPreconditionError(std::string(100000, 'x')), "NO_FIT", {});
  grpc::Status out = ToGrpcStatus(long_status);
  EXPECT_EQ(out.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_LT(out.error_message().size(), kMaxErrorMessageBytes + 64);
  EXPECT_THAT(out.error_message(), HasSubstr("(97952 more bytes)"));
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(out.error_details()));
  EXPECT_LT(details.message().size(), kMaxErrorMessageBytes + 64);
  EXPECT_GT(details.details_size(), 0);
}

}  // namespace
}  // namespace ctxsel
