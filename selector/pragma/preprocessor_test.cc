#include "selector/pragma/preprocessor.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Seen {
  std::vector<std::string> lines;
  std::vector<SourceNote> notes;
};

Seen Preprocess(absl::string_view text,
                std::map<std::string, std::string> defines = {},
                std::vector<std::string> undefines = {}) {
  Preprocessor pp(defines, undefines);
  Seen seen;
  for (const LogicalLine& l : SplitLogicalLines(text, Language::kC)) {
    if (pp.Feed(l, &seen.notes) && !l.text.empty()) {
      seen.lines.push_back(pp.Expand(l, 0).text);
    }
  }
  return seen;
}

TEST(PreprocessorTest, IntegerConditions) {
  Seen s = Preprocess(
      "a\n#if 0\nb\n#if X\nc\n#endif\n#else\nd\n#endif\n"
      "#if 1\ne\n#else\nf\n#endif\n#if 0\ni\n#elif 1\nj\n#elif 1\nk\n#endif");
  EXPECT_THAT(s.lines, ElementsAre("a", "d", "e", "j"));
  EXPECT_THAT(s.notes, IsEmpty());
}

TEST(PreprocessorTest, DefinedAndFlags) {
  const char* text =
      "#ifdef USE_GPU\ngpu\n#else\ncpu\n#endif\n"
      "#if defined(LEVEL) && LEVEL >= 2\nhigh\n#elif !defined LEVEL\nnone\n"
      "#else\nlow\n#endif\n"
      "#ifndef _OPENMP\nserial\n#endif\n";
  EXPECT_THAT(Preprocess(text).lines, ElementsAre("cpu", "none"));
  EXPECT_THAT(Preprocess(text, {{"USE_GPU", "1"}, {"LEVEL", "3"}}).lines,
              ElementsAre("gpu", "high"));
  EXPECT_THAT(Preprocess(text, {{"LEVEL", "0x1"}}, {"_OPENMP"}).lines,
              ElementsAre("cpu", "low", "serial"));
}

TEST(PreprocessorTest, DefinesInTheFileCount) {
  EXPECT_THAT(Preprocess("#define N 2\n#if N > 1\nyes\n#endif\n#undef N\n"
                         "#ifdef N\nno\n#endif")
                  .lines,
              ElementsAre("yes"));
}

TEST(PreprocessorTest, UndecidableReadsTheFirstBranchAndWarns) {
  Seen s = Preprocess(
      "#if __has_include(<cuda.h>)\na\n#else\nb\n#endif\n"
      "#define F(x) x\n#if F(1)\nc\n#endif");
  EXPECT_THAT(s.lines, ElementsAre("a", "c"));
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_EQ(s.notes[0].position.line, 1);
  EXPECT_THAT(s.notes[0].message, HasSubstr("cannot evaluate"));
}

TEST(PreprocessorTest, ExpandsObjectLikeMacrosWithPositions) {
  Preprocessor pp({{"ARCH", "nvptx"}}, {});
  std::vector<SourceNote> notes;
  const std::vector<LogicalLine> lines = SplitLogicalLines(
      "#define MIN 4096\n#define LIMIT (MIN * 2)\n"
      "#pragma omp declare variant(v) match(device={arch(ARCH)}, "
      "user={condition(n > LIMIT)}) \"ARCH\"",
      Language::kC);
  for (const LogicalLine& l : lines) pp.Feed(l, &notes);
  const LogicalLine e = pp.Expand(lines[2], 0);
  EXPECT_THAT(e.text, HasSubstr("arch( nvptx )"));
  EXPECT_THAT(e.text, HasSubstr("n >  ( 4096  * 2) )"));
  EXPECT_THAT(e.text, HasSubstr("\"ARCH\""));
  const size_t at = e.text.find("4096");
  EXPECT_EQ(e.PositionOf(at).line, 3);
  EXPECT_EQ(e.PositionOf(at).column,
            static_cast<int>(lines[2].text.find("LIMIT")) + 1);
}

TEST(PreprocessorTest, WarnsAboutIncludesAndDirectivesInMacros) {
  Seen s = Preprocess(
      "#include <stdio.h>\n#include \"kernels.h\"\n"
      "#define DECL _Pragma(\"omp declare variant(v) match(x)\")");
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_THAT(s.notes[0].message, HasSubstr("\"kernels.h\" is not followed"));
  EXPECT_THAT(s.notes[1].message, HasSubstr("macro DECL"));
}

}  // namespace
}  // namespace ctxsel::pragma
