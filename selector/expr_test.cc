#include "selector/expr.h"

#include <climits>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::selector::internal {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Expression> Parse(absl::string_view text) {
  absl::StatusOr<std::vector<Token>> tokens = Lex(text);
  if (!tokens.ok()) return tokens.status();
  size_t at = 0;
  absl::StatusOr<Expression> e = ParseExpression(*tokens, at);
  if (e.ok() && (*tokens)[at].kind != TokenKind::kEnd) {
    return absl::InvalidArgumentError("trailing tokens");
  }
  return e;
}

int64_t Eval(absl::string_view text, const Variables& vars = {}) {
  absl::StatusOr<Expression> e = Parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  if (!e.ok()) return -999;
  EvalResult r = e->Evaluate(vars);
  EXPECT_TRUE(r.ok()) << text << ": " << DescribeEvalError(r);
  return r.value;
}

std::string EvalError(absl::string_view text, const Variables& vars) {
  absl::StatusOr<Expression> e = Parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  if (!e.ok()) return "";
  EvalResult r = e->Evaluate(vars);
  EXPECT_FALSE(r.ok()) << text;
  return DescribeEvalError(r);
}

TEST(ExpressionTest, CPrecedenceAndAssociativity) {
  EXPECT_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(Eval("10 - 4 - 3"), 3);
  EXPECT_EQ(Eval("100 / 10 / 5"), 2);
  EXPECT_EQ(Eval("7 % 4"), 3);
  EXPECT_EQ(Eval("-7 / 2"), -3);
  EXPECT_EQ(Eval("1 < 2 == 1"), 1);
  EXPECT_EQ(Eval("!0 + !5"), 1);
  EXPECT_EQ(Eval("1 || 0 && 0"), 1);
  EXPECT_EQ(Eval("0 ? 1 : 0 ? 2 : 3"), 3);
  EXPECT_EQ(Eval("true + true"), 2);
  EXPECT_EQ(Eval("0x10 + 1"), 17);
  EXPECT_EQ(Eval("3 >= 3 && 2 <= 1 || 4 != 4"), 0);
  EXPECT_EQ(Eval("--5"), 5);
  EXPECT_EQ(Eval("+5"), 5);
}

bool StartsWithDev(absl::string_view name) {
  return absl::StartsWith(name, "dev_");
}

TEST(ExpressionTest, ReadsVariableSeesEveryVariableTheExpressionReads) {
  absl::StatusOr<Expression> e = Parse("N > 4 && (M < 2 || dev_mem > N)");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->ReadsVariable(StartsWithDev));
  e = Parse("N > 4 && (M < 2 || mem_dev > N)");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->ReadsVariable(StartsWithDev));
  e = Parse("2 * 3 > 4");  // folded: reads nothing
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->ReadsVariable([](absl::string_view) { return true; }));
}

TEST(ExpressionTest, VariablesAndShortCircuit) {
  Variables vars = {{"N", 64}, {"zero", 0}};
  EXPECT_EQ(Eval("N > 32", vars), 1);
  EXPECT_EQ(Eval("zero != 0 && 10 / zero > 1", vars), 0);
  EXPECT_EQ(Eval("zero == 0 || 10 / zero > 1", vars), 1);
  EXPECT_EQ(Eval("zero ? 1 / zero : N", vars), 64);
  EXPECT_EQ(EvalError("M + 1", vars), "unknown variable M");
}

TEST(ExpressionTest, OverflowAndDivisionByZeroAreErrors) {
  Variables vars = {
      {"big", INT64_MAX}, {"small", INT64_MIN}, {"z", 0}, {"m1", -1}};
  EXPECT_EQ(EvalError("big + 1", vars), "integer overflow");
  EXPECT_EQ(EvalError("small - 1", vars), "integer overflow");
  EXPECT_EQ(EvalError("big * 2", vars), "integer overflow");
  EXPECT_EQ(EvalError("-small", vars), "integer overflow");
  EXPECT_EQ(EvalError("small / m1", vars), "integer overflow");
  EXPECT_EQ(Eval("small % m1", vars), 0);
  EXPECT_EQ(EvalError("1 / z", vars), "division by zero");
  EXPECT_EQ(EvalError("1 % z", vars), "division by zero");
}

TEST(ExpressionTest, ConstantsFoldAtParseTime) {
  absl::StatusOr<Expression> e = Parse("2 * (3 + 4)");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->constant());
  EXPECT_EQ(e->value(), 14);
  EXPECT_EQ(e->text(), "14");
  e = Parse("N * (3 + 4)");
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->constant());
  EXPECT_EQ(e->text(), "N * 7");
  // A failing constant part is kept and fails when evaluated.
  e = Parse("N ? 1 / 0 : 2");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->Evaluate({{"N", 0}}).value, 2);
  EXPECT_FALSE(e->Evaluate({{"N", 1}}).ok());
}

TEST(ExpressionTest, PrintsMinimalParentheses) {
  EXPECT_EQ(Parse("(a + b) * c")->text(), "(a + b) * c");
  EXPECT_EQ(Parse("a + (b * c)")->text(), "a + b * c");
  EXPECT_EQ(Parse("a - (b - c)")->text(), "a - (b - c)");
  EXPECT_EQ(Parse("!(a && b)")->text(), "!(a && b)");
  EXPECT_EQ(Parse("(a ? b : c) ? d : e")->text(), "(a ? b : c) ? d : e");
  // Prefix operators need no parentheses, which would nest the canonical
  // text deeper than the input; a space keeps "- -" from reading as C's "--".
  EXPECT_EQ(Parse("-(-x)")->text(), "- -x");
  EXPECT_EQ(Parse("!(!x)")->text(), "!!x");
  EXPECT_EQ(Parse("-(!(-x))")->text(), "-!-x");
  EXPECT_EQ(Parse("!(-(-x))")->text(), "!- -x");
  EXPECT_EQ(Parse("-(x + 1)")->text(), "-(x + 1)");
}

// INT64_MIN has no positive literal, so "-" and the digits 2^63 read as one
// literal: a folded constant always prints as text that parses back.
TEST(ExpressionTest, Int64MinIsALiteral) {
  EXPECT_EQ(Eval("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(Eval("- 9223372036854775808 + 1"), INT64_MIN + 1);
  EXPECT_EQ(Parse("N + (-9223372036854775807 - 1)")->text(),
            "N + -9223372036854775808");
  EXPECT_EQ(Parse("N + -(-9223372036854775807 - 1)")->text(),
            "N + - -9223372036854775808");
  EXPECT_EQ(Eval("- -9223372036854775807"), INT64_MAX);
  EXPECT_THAT(Parse("-9223372036854775809").status().message(),
              HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(Parse("N - 9223372036854775808").status().message(),
              HasSubstr("does not fit in 64 bits"));
}

TEST(ExpressionTest, SyntaxErrorsHavePositions) {
  EXPECT_THAT(Parse("1 +").status().message(), HasSubstr("1:4: expected an"));
  EXPECT_THAT(Parse("(1").status().message(), HasSubstr("1:3: expected ')'"));
  EXPECT_THAT(Parse("0x").status().message(),
              HasSubstr("invalid integer literal '0x'"));
  EXPECT_THAT(Parse("12ab").status().message(),
              HasSubstr("invalid integer literal"));
  EXPECT_THAT(Parse("9223372036854775808").status().message(),
              HasSubstr("does not fit in 64 bits"));
  EXPECT_TRUE(Parse("-9223372036854775807 - 1").ok());
}

// A variable node keeps the hash of its name, made when parsed, for the
// lookup: it must find the variable in any map and in any copy of the
// expression, and miss as a plain lookup would.
TEST(ExpressionTest, VariablesFoundByTheirParsedHashAmongMany) {
  absl::StatusOr<Expression> parsed = Parse("N > 32 && n % 4 == Nn");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  Variables many;
  for (int i = 0; i < 200; ++i) many["v" + std::to_string(i)] = i;
  many["N"] = 64;
  many["n"] = 7;
  many["Nn"] = 3;
  const Expression copy = *parsed;
  EvalResult r = copy.Evaluate(many);
  ASSERT_TRUE(r.ok()) << DescribeEvalError(r);
  EXPECT_EQ(r.value, 1);
  many["Nn"] = 2;
  EXPECT_EQ(copy.Evaluate(many).value, 0);
  many.erase("n");
  EXPECT_EQ(DescribeEvalError(copy.Evaluate(many)), "unknown variable n");
  EXPECT_EQ(DescribeEvalError(parsed->Evaluate({{"n", 1}})),
            "unknown variable N");
}

}  // namespace
}  // namespace ctxsel::selector::internal
