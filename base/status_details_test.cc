#include "base/status_details.h"

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(StatusDetailsTest, FieldViolationIsInvalidArgumentNamingTheField) {
  absl::Status s = FieldViolation("kernel", "required");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "kernel: required");
  auto bad = GetDetail<google::rpc::BadRequest>(s);
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->field_violations_size(), 1);
  EXPECT_EQ(bad->field_violations(0).field(), "kernel");
  EXPECT_EQ(bad->field_violations(0).description(), "required");
}

TEST(StatusDetailsTest, RoundTripsThroughTheWireForm) {
  absl::Status s = WithResourceInfo(
      WithErrorInfo(absl::NotFoundError("node: 'n1' is not known"),
                    "NODE_NOT_FOUND", {{"node", "n1"}}),
      "ctxsel.v1.Node", "n1");
  google::rpc::Status rpc = ToRpcStatus(s);
  EXPECT_EQ(rpc.code(), 5);
  EXPECT_EQ(rpc.message(), "node: 'n1' is not known");
  EXPECT_EQ(rpc.details_size(), 2);

  absl::Status back = FromRpcStatus(absl::StatusCode::kNotFound, rpc.message(),
                                    rpc.SerializeAsString());
  EXPECT_EQ(back, s);
  auto info = GetDetail<google::rpc::ErrorInfo>(back);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "NODE_NOT_FOUND");
  EXPECT_EQ(info->domain(), "ctxsel.dev");
  EXPECT_EQ(info->metadata().at("node"), "n1");
  EXPECT_EQ(GetDetail<google::rpc::ResourceInfo>(back)->resource_name(), "n1");
  EXPECT_EQ(DescribeDetails(back),
            "  reason NODE_NOT_FOUND node=n1\n"
            "  resource ctxsel.v1.Node n1\n");
}

TEST(StatusDetailsTest, EveryErrorGetsAnErrorInfo) {
  google::rpc::Status rpc = ToRpcStatus(absl::UnavailableError("store down"));
  ASSERT_EQ(rpc.details_size(), 1);
  google::rpc::ErrorInfo info;
  ASSERT_TRUE(rpc.details(0).UnpackTo(&info));
  EXPECT_EQ(info.reason(), "UNAVAILABLE");
  EXPECT_EQ(info.domain(), "ctxsel.dev");
}

TEST(StatusDetailsTest, MetadataAccumulates) {
  absl::Status s = WithErrorInfo(absl::InternalError("x"), "A", {{"k", "1"}});
  s = WithErrorInfo(s, "B", {{"line", "3"}});
  auto info = GetDetail<google::rpc::ErrorInfo>(s);
  EXPECT_EQ(info->reason(), "B");
  EXPECT_EQ(info->metadata().size(), 2u);
}

TEST(StatusDetailsTest, UndecodableDetailsLeaveCodeAndMessage) {
  absl::Status s =
      FromRpcStatus(absl::StatusCode::kInternal, "boom", "\xff\xff garbage");
  EXPECT_EQ(s, absl::InternalError("boom"));
}

TEST(StatusDetailsTest, FieldViolationsSayFieldInvalidUnlessNamedOtherwise) {
  auto reason = [](const absl::Status& s) {
    return GetDetail<google::rpc::ErrorInfo>(s)->reason();
  };
  EXPECT_EQ(reason(FieldViolation("page_size", "negative")),
            kReasonFieldInvalid);
  EXPECT_EQ(
      reason(WithFieldViolation(absl::InvalidArgumentError("x"), "x", "bad")),
      kReasonFieldInvalid);
  // A specific reason set before or after wins.
  EXPECT_EQ(reason(WithErrorInfo(FieldViolation("page_token", "foreign"),
                                 kReasonPageTokenInvalid)),
            kReasonPageTokenInvalid);
  EXPECT_EQ(
      reason(WithFieldViolation(WithErrorInfo(absl::InvalidArgumentError("s"),
                                              kReasonSelectorInvalid),
                                "variants[0].selector", "bad")),
      kReasonSelectorInvalid);
}

TEST(StatusDetailsTest, RebaseMovesOnlyFieldsUnderThePrefix) {
  absl::Status s = WithFieldViolation(
      FieldViolation("node.devices[0].index", "-2"), "nodes", "other");
  s = RebaseFieldViolations(WithMessage(s, "hypothetical_nodes[2]: bad"),
                            "node.", "hypothetical_nodes[2].");
  EXPECT_EQ(s.message(), "hypothetical_nodes[2]: bad");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  auto bad = GetDetail<google::rpc::BadRequest>(s);
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->field_violations_size(), 2);
  EXPECT_EQ(bad->field_violations(0).field(),
            "hypothetical_nodes[2].devices[0].index");
  EXPECT_EQ(bad->field_violations(1).field(), "nodes");
  EXPECT_EQ(GetDetail<google::rpc::ErrorInfo>(s)->reason(),
            kReasonFieldInvalid);
}

}  // namespace
}  // namespace ctxsel
