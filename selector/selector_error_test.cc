#include "selector/selector_error.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/selector.h"

namespace ctxsel::selector {
namespace {

TEST(SelectorErrorTest, RoundTripsThroughTheStatus) {
  SelectorError e;
  e.position = {3, 7, 0};
  e.message = "odd: 12:3: bytes \n\0 kept";
  e.message.push_back('\0');
  e.first = TextPosition{1, 2, 4};
  e.context = "in 'x:1'";
  absl::Status s = MakeSelectorError(e);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), e.ToString());
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith("3:7: odd: 12:3:"));
  EXPECT_THAT(
      std::string(s.message()),
      ::testing::EndsWith("(first at 1:2 of selector text 4) (in 'x:1')"));
  std::optional<SelectorError> back = GetSelectorError(s);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->message, e.message);
  EXPECT_EQ(back->position.line, 3);
  EXPECT_EQ(back->position.column, 7);
  ASSERT_TRUE(back->first.has_value());
  EXPECT_EQ(back->first->text, 4);
  EXPECT_EQ(back->context, e.context);
}

TEST(SelectorErrorTest, OtherStatusesHaveNone) {
  EXPECT_FALSE(GetSelectorError(absl::OkStatus()).has_value());
  EXPECT_FALSE(GetSelectorError(absl::InvalidArgumentError("1:2: look-alike"))
                   .has_value());
}

TEST(SelectorErrorTest, ParseErrorsCarryEveryPosition) {
  absl::StatusOr<Selector> s =
      Selector::Parse("device={kind(gpu),\n  kind(cpu)}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "2:3: trait selector 'kind' given twice in the device trait set "
            "(first at 1:9)");
  std::optional<SelectorError> e = GetSelectorError(s.status());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->position.line, 2);
  EXPECT_EQ(e->position.column, 3);
  ASSERT_TRUE(e->first.has_value());
  EXPECT_EQ(e->first->line, 1);
  EXPECT_EQ(e->first->column, 9);
  EXPECT_EQ(e->message,
            "trait selector 'kind' given twice in the device trait set");
  // Single-position errors too.
  e = GetSelectorError(Selector::Parse("devce={kind(gpu)}").status());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->position.column, 1);
  EXPECT_FALSE(e->first.has_value());
}

TEST(SelectorErrorTest, EffectiveSelectorPositionsNameTheirText) {
  // Texts: 0 the inner, 1 the outer's inner, 2 the outer's outer.
  absl::StatusOr<Selector> outer = EffectiveSelector(
      *Selector::Parse("user={condition(1)}"),
      *Selector::Parse("implementation={vendor(llvm)}, device={kind(gpu)}"));
  ASSERT_TRUE(outer.ok()) << outer.status();
  absl::StatusOr<Selector> e =
      EffectiveSelector(*Selector::Parse("device={kind(cpu)}"), *outer);
  ASSERT_FALSE(e.ok());
  std::optional<SelectorError> error = GetSelectorError(e.status());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->position.text, 2);
  EXPECT_EQ(error->position.column, 40);
  ASSERT_TRUE(error->first.has_value());
  EXPECT_EQ(error->first->text, 0);
  EXPECT_EQ(error->first->column, 9);
  EXPECT_THAT(error->context,
              ::testing::HasSubstr("in the effective selector of "
                                   "'device={kind(cpu)}' nested in"));
}

}  // namespace
}  // namespace ctxsel::selector
