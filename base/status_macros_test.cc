#include "base/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace {

int calls = 0;

absl::Status Fails() {
  ++calls;
  return absl::NotFoundError("missing");
}
absl::Status Succeeds() {
  ++calls;
  return absl::OkStatus();
}
absl::StatusOr<std::unique_ptr<std::string>> Text(bool ok) {
  ++calls;
  if (!ok) return absl::InvalidArgumentError("bad");
  return std::make_unique<std::string>("text");
}

absl::Status Chain(bool first_ok) {
  CTXSEL_RETURN_IF_ERROR(first_ok ? Succeeds() : Fails());
  CTXSEL_RETURN_IF_ERROR(Succeeds());
  return absl::OkStatus();
}

absl::StatusOr<size_t> Length(bool ok) {
  CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<std::string> text, Text(ok));
  std::string copy;
  CTXSEL_ASSIGN_OR_RETURN(auto again, Text(true));  // two on one function
  copy = *again;
  return text->size() + copy.size();
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstError) {
  calls = 0;
  EXPECT_EQ(Chain(false).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(calls, 1);  // evaluated once, nothing after it
  calls = 0;
  EXPECT_TRUE(Chain(true).ok());
  EXPECT_EQ(calls, 2);
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValueOrReturnsTheStatus) {
  calls = 0;
  absl::StatusOr<size_t> bad = Length(false);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
  absl::StatusOr<size_t> good = Length(true);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 8u);
}

}  // namespace
