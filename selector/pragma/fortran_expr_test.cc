#include "selector/pragma/fortran_expr.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

using ::testing::HasSubstr;

LogicalLine Line(absl::string_view text) {
  return SplitLogicalLines(text, Language::kFortran)[0];
}

TEST(FortranExprTest, PrecedenceIsMadeExplicit) {
  absl::StatusOr<LogicalLine> c = TranslateFortranExpressions(
      Line("!$omp declare variant(v) match(user={condition(.not. a > b "
           ".and. c .ge. 2)})"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->text,
              HasSubstr("condition(((!(((a)) > ((b)))) && (((c)) >= ((2)))))"));
  // Each character keeps the position of its Fortran token.
  const size_t ge = c->text.find(">=");
  EXPECT_EQ(c->PositionOf(ge).column,
            static_cast<int>(Line("!$omp declare variant(v) match(user={"
                                  "condition(.not. a > b .and. c .ge. 2)})")
                                 .text.find(".ge.")) +
                1);
}

TEST(FortranExprTest, LinesWithoutFortranOperatorsAreKept) {
  const LogicalLine line =
      Line("!$omp declare variant(v) match(user={condition(n > 4)})");
  absl::StatusOr<LogicalLine> c = TranslateFortranExpressions(line);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->text, line.text);
}

TEST(FortranExprTest, UnsupportedOperatorsAreErrors) {
  absl::StatusOr<LogicalLine> c = TranslateFortranExpressions(
      Line("!$omp declare variant(v) match(user={condition(n ** 2 .gt. 4)})"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("'**' is not supported"));
}

// The example at the top of fortran_expr.h.
TEST(FortranExprTest, HeaderExample) {
  absl::StatusOr<LogicalLine> c = TranslateFortranExpressions(
      Line("!$omp declare variant(v) "
           "match(user={condition(n .gt. 4 .and. .not. f)})"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->text, HasSubstr("condition(((((n)) > ((4))) && (!((f)))))"));
}

}  // namespace
}  // namespace ctxsel::pragma
