#include "selector/pragma/embedded.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

std::vector<std::string> Pieces(absl::string_view text) {
  std::vector<std::string> out;
  for (const LinePiece& p :
       SplitEmbeddedDirectives(SplitLogicalLines(text, Language::kC)[0])) {
    out.push_back((p.directive ? "D:" : "C:") + p.line.text);
  }
  return out;
}

using ::testing::ElementsAre;

TEST(EmbeddedTest, PragmaOperatorIsDestringized) {
  EXPECT_THAT(
      Pieces("int a; _Pragma(\"omp declare variant(v) "
             "match(device={isa(\\\"avx\\\")})\") void f(); _Pragma(\"once\")"),
      ElementsAre("C:int a; ",
                  "D:#pragma omp declare variant(v) "
                  "match(device={isa(\"avx\")})",
                  "C: void f(); "));
}

TEST(EmbeddedTest, AttributeForms) {
  EXPECT_THAT(Pieces("[[nodiscard]] int g();"),
              ElementsAre("C:[[nodiscard]] int g();"));
  EXPECT_THAT(
      Pieces("[[omp::sequence(directive(a), omp::decl(b))]] void f();"),
      ElementsAre("D:#pragma omp a", "D:#pragma omp b", "C: void f();"));
  EXPECT_THAT(Pieces("[[ using omp : directive(x(1)) ]] void f();"),
              ElementsAre("D:#pragma omp x(1)", "C: void f();"));
}

TEST(EmbeddedTest, DirectiveCharactersKeepTheirPositions) {
  const LogicalLine line = SplitLogicalLines(
      "  [[omp::directive(declare variant(v))]]", Language::kC)[0];
  std::vector<LinePiece> p = SplitEmbeddedDirectives(line);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].line.PositionOf(0).column, 3);  // the attribute
  const size_t declare = p[0].line.text.find("declare");
  EXPECT_EQ(p[0].line.PositionOf(declare).column, 20);
}

// The example at the top of embedded.h.
TEST(EmbeddedTest, HeaderExample) {
  EXPECT_THAT(Pieces("[[omp::directive(declare variant(g) "
                     "match(user={condition(1)}))]] void f();"),
              ElementsAre("D:#pragma omp declare variant(g) "
                          "match(user={condition(1)})",
                          "C: void f();"));
}

}  // namespace
}  // namespace ctxsel::pragma
