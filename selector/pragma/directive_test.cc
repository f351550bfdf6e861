#include "selector/pragma/directive.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

using ::testing::HasSubstr;

LogicalLine Line(absl::string_view text, Language language = Language::kC) {
  return SplitLogicalLines(text, language)[0];
}

TEST(DirectiveTest, NonOpenMpLinesAreNotDirectives) {
  for (absl::string_view text :
       {"int x;", "#include <x>", "#pragma once", "#pragma ompx foo"}) {
    std::optional<OmpDirective> d = ParseOmpDirective(Line(text), Language::kC);
    EXPECT_FALSE(d.has_value()) << text;
  }
}

TEST(DirectiveTest, RecognizesVariantDirectives) {
  struct Case {
    const char* text;
    DirectiveKind kind;
  } cases[] = {
      {"#pragma omp declare variant(f) match(x)",
       DirectiveKind::kDeclareVariant},
      {"  #  pragma   omp   begin declare variant match(x)",
       DirectiveKind::kBeginDeclareVariant},
      {"#pragma omp end declare variant", DirectiveKind::kEndDeclareVariant},
      {"#pragma omp metadirective when(x: y)", DirectiveKind::kMetadirective},
      {"#pragma omp begin metadirective", DirectiveKind::kBeginMetadirective},
      {"#pragma omp end metadirective", DirectiveKind::kEndMetadirective},
      {"#pragma omp declare simd", DirectiveKind::kOther},
      {"#pragma omp parallel for", DirectiveKind::kOther},
  };
  for (const Case& c : cases) {
    std::optional<OmpDirective> d =
        ParseOmpDirective(Line(c.text), Language::kC);
    ASSERT_TRUE(d.has_value()) << c.text;
    EXPECT_EQ(d->kind, c.kind) << c.text;
  }
}

TEST(DirectiveTest, SplitsArgumentAndClauses) {
  const LogicalLine line = Line(
      "#pragma omp declare variant( ns::f ) match(device={arch(\"a)\")}), "
      "adjust_args(need_device_ptr: p) append_args(interop(target))");
  std::optional<OmpDirective> d = ParseOmpDirective(line, Language::kC);
  ASSERT_TRUE(d.has_value());
  ASSERT_TRUE(d->error.ok()) << d->error;
  const OmpDirective& dir = *d;
  EXPECT_EQ(dir.argument, " ns::f ");
  ASSERT_EQ(dir.clauses.size(), 3u);
  EXPECT_EQ(dir.clauses[0].name, "match");
  EXPECT_EQ(dir.clauses[0].argument, "device={arch(\"a)\")}");
  EXPECT_EQ(line.text.substr(dir.clauses[0].argument_offset, 6), "device");
  EXPECT_EQ(dir.clauses[1].name, "adjust_args");
  EXPECT_EQ(dir.clauses[2].argument, "interop(target)");
}

TEST(DirectiveTest, FortranIsCaseInsensitiveOutsideStrings) {
  std::optional<OmpDirective> d = ParseOmpDirective(
      Line("!$OMP DECLARE VARIANT(Base:Var) MATCH(DEVICE={ARCH(\"X\")})",
           Language::kFortran),
      Language::kFortran);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, DirectiveKind::kDeclareVariant);
  EXPECT_EQ(d->argument, "base:var");
  EXPECT_EQ(d->clauses[0].argument, "device={arch(\"X\")}");
}

TEST(DirectiveTest, SyntaxErrorsHavePositions) {
  std::optional<OmpDirective> d = ParseOmpDirective(
      Line("#pragma omp declare variant match(x)"), Language::kC);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, DirectiveKind::kDeclareVariant);
  EXPECT_THAT(d->error.message(), HasSubstr("1:29: expected '(variant-name)'"));
  d = ParseOmpDirective(Line("#pragma omp declare variant(f) match(x"),
                        Language::kC);
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(d->error.message(), HasSubstr("1:37: unbalanced parenthesis"));
}

TEST(DirectiveTest, BeginWithBadClausesKeepsItsKind) {
  std::optional<OmpDirective> d = ParseOmpDirective(
      Line("#pragma omp begin declare variant match(device={kind(gpu)}"),
      Language::kC);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, DirectiveKind::kBeginDeclareVariant);
  EXPECT_FALSE(d->error.ok());
}

// OpenMP 5.2 §3.1: one comma may precede each clause, the first one too.
TEST(DirectiveTest, ACommaComesBeforeAClause) {
  for (absl::string_view text :
       {"!$omp declare variant(f) match(user={condition(.true.)}),, "
        "adjust_args(nothing: a)",
        "!$omp declare variant(f) ,, match(user={condition(.true.)})"}) {
    std::optional<OmpDirective> d =
        ParseOmpDirective(Line(text, Language::kFortran), Language::kFortran);
    ASSERT_TRUE(d.has_value());
    EXPECT_THAT(d->error.message(), HasSubstr("expected a clause before ','"))
        << text;
  }
  std::optional<OmpDirective> trailing = ParseOmpDirective(
      Line("!$omp declare variant(f) match(user={condition(.true.)}),",
           Language::kFortran),
      Language::kFortran);
  ASSERT_TRUE(trailing.has_value());
  EXPECT_THAT(trailing->error.message(),
              HasSubstr("expected a clause after ','"));
  for (absl::string_view text :
       {"!$omp declare variant(f) match(user={condition(.true.)}), "
        "adjust_args(nothing: a)",
        "!$omp declare variant(f), match(user={condition(.true.)})",
        "!$omp declare variant(f) , match(user={condition(.true.)})"}) {
    std::optional<OmpDirective> d =
        ParseOmpDirective(Line(text, Language::kFortran), Language::kFortran);
    ASSERT_TRUE(d.has_value());
    EXPECT_TRUE(d->error.ok()) << text << ": " << d->error;
    EXPECT_EQ(d->clauses.size(), absl::StrContains(text, "adjust") ? 2u : 1u);
  }
}

TEST(DirectiveTest, TopLevelSplitting) {
  std::vector<Piece> p = SplitTopLevel(" a(1, 2) , {b, c}, \"d,e\" ", ',');
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].text, "a(1, 2)");
  EXPECT_EQ(p[0].offset, 1u);
  EXPECT_EQ(p[1].text, "{b, c}");
  EXPECT_EQ(p[2].text, "\"d,e\"");
  EXPECT_EQ(FindTopLevel("user={condition(a?b:c)}: teams", ':'), 23u);
  EXPECT_EQ(FindTopLevel("abc", ':'), absl::string_view::npos);
}

}  // namespace
}  // namespace ctxsel::pragma
