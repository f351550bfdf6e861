#include "selector/pragma/source_text.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Texts(absl::string_view text, Language language) {
  std::vector<std::string> out;
  for (const LogicalLine& l : SplitLogicalLines(text, language)) {
    out.push_back(l.text);
  }
  return out;
}

TEST(SourceTextTest, LanguageFromExtension) {
  EXPECT_EQ(LanguageOf("a.c"), Language::kC);
  EXPECT_EQ(LanguageOf("a.cpp"), Language::kC);
  EXPECT_EQ(LanguageOf("a.F90"), Language::kFortran);
  EXPECT_EQ(LanguageOf("dir/a.f"), Language::kFortran);
  EXPECT_EQ(LanguageOf("a.f08"), Language::kFortran);
}

TEST(SourceTextTest, ContinuationsJoinAndKeepPositions) {
  std::vector<LogicalLine> lines = SplitLogicalLines(
      "#pragma omp declare \\\n  variant(f)\nint f();\n", Language::kC);
  ASSERT_EQ(lines.size(), 3u);  // the last is the empty line after '\n'
  EXPECT_EQ(lines[0].text, "#pragma omp declare   variant(f)");
  const size_t v = lines[0].text.find("variant");
  EXPECT_EQ(lines[0].PositionOf(v).line, 2);
  EXPECT_EQ(lines[0].PositionOf(v).column, 3);
  EXPECT_EQ(lines[1].text, "int f();");
  EXPECT_EQ(lines[1].PositionOf(0).line, 3);
}

TEST(SourceTextTest, CommentsBecomeOneSpace) {
  EXPECT_THAT(Texts("a /* x\n y */ b // c\nd", Language::kC),
              ElementsAre("a   b  ", "d"));
}

TEST(SourceTextTest, LiteralsHideCommentsAndPragmas) {
  EXPECT_THAT(Texts("s = \"/* no */ // no\"; c = '\"';\n", Language::kC),
              ElementsAre("s = \"/* no */ // no\"; c = '\"';", ""));
  EXPECT_THAT(Texts("n = 1'000; s = \"a\\\"b\";", Language::kC),
              ElementsAre("n = 1'000; s = \"a\\\"b\";"));
  EXPECT_THAT(Texts("s = R\"x(\n#pragma omp end declare variant\n)x\";\nint y;",
                    Language::kC),
              ElementsAre("s = R\"\";", "int y;"));
}

TEST(SourceTextTest, FixedFormFortran) {
  std::vector<SourceNote> notes;
  std::vector<LogicalLine> lines = SplitLogicalLines(
      "C     a comment\n"
      "      SUBROUTINE F(A,\n"
      "     +             B)\n"
      "C$OMP DECLARE VARIANT(G)\n"
      "*$OMP+ MATCH(CONSTRUCT={PARALLEL})\n"
      "!$omp declare variant(h) match(user={condition(1)})\n"
      "      X = 1                                                           "
      "  IGNORED\n",
      Language::kFortran, /*fixed_form=*/true, &notes);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].text, "SUBROUTINE F(A, B)");
  EXPECT_EQ(lines[1].text,
            "!$omp DECLARE VARIANT(G) MATCH(CONSTRUCT={PARALLEL})");
  EXPECT_EQ(lines[1].PositionOf(lines[1].text.find("MATCH")).line, 5);
  EXPECT_EQ(lines[1].PositionOf(lines[1].text.find("MATCH")).column, 8);
  EXPECT_EQ(lines[2].text,
            "!$omp declare variant(h) match(user={condition(1)})");
  EXPECT_EQ(lines[3].text, "X = 1");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].position.line, 7);
  EXPECT_TRUE(IsFixedFormName("a.F"));
  EXPECT_TRUE(IsFixedFormName("a.for"));
  EXPECT_FALSE(IsFixedFormName("a.f90"));
}

TEST(SourceTextTest, FortranCommentsContinuationsAndDirectives) {
  std::vector<LogicalLine> lines = SplitLogicalLines(
      "  call f(a, & ! comment\n"
      "! between\n"
      "      & b)\n"
      "!$omp declare variant(g) & \n"
      "!$omp& match(construct={parallel}) ! why\n"
      "x = '!not a comment'\n",
      Language::kFortran);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0].text, "call f(a,  b)");
  EXPECT_EQ(lines[1].text,
            "!$omp declare variant(g)  match(construct={parallel})");
  const size_t m = lines[1].text.find("match");
  EXPECT_EQ(lines[1].PositionOf(m).line, 5);
  EXPECT_EQ(lines[1].PositionOf(m).column, 8);
  EXPECT_EQ(lines[2].text, "x = '!not a comment'");
}

// The example at the top of source_text.h.
TEST(SourceTextTest, HeaderExample) {
  std::vector<LogicalLine> lines = SplitLogicalLines(
      "#pragma omp declare \\\n variant(f) /* x */", Language::kC);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "#pragma omp declare  variant(f)  ");
  EXPECT_EQ(lines[0].text[21], 'v');
  EXPECT_EQ(lines[0].PositionOf(21).line, 2);
  EXPECT_EQ(lines[0].PositionOf(21).column, 2);
}

}  // namespace
}  // namespace ctxsel::pragma
