#include "client/cli/text_fit.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::ElementsAre;

size_t LongestLine(const std::string& text) {
  size_t longest = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    longest = std::max(longest, line.size());
  }
  return longest;
}

TEST(WrapTextTest, BreaksLongLinesAtSpacesWithAHangingIndent) {
  EXPECT_EQ(WrapText("  aaa bbb ccc ddd\nshort", 10, 2),
            "  aaa bbb\n    ccc\n    ddd\nshort");
}

TEST(WrapTextTest, KeepsLinesThatFitAndEveryWord) {
  const std::string text =
      "device class x86_64_v4/amx: 1 devices; not compatible: device.isa: "
      "sm_70 not in {adx, aes, amx_bf16, amx_int8, amx_tile, avx, avx2, "
      "avx512_bf16, avx512_bitalg, avx512_fp16, avx512_vbmi2, avx512_vnni}\n"
      "fits";
  const std::string wrapped = WrapText(text, 40);
  EXPECT_LE(LongestLine(wrapped), 40u);
  std::vector<std::string> before =
      absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  std::vector<std::string> after =
      absl::StrSplit(wrapped, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  EXPECT_EQ(before, after);
}

// A message with one reason per class breaks between reasons.
TEST(WrapTextTest, BreaksBetweenClausesFirst) {
  EXPECT_EQ(WrapText("no fit: a: too small; bb: claimed; c: d e f g h", 24, 2),
            "no fit: a: too small;\n  bb: claimed;\n  c: d e f g h");
}

// A path longer than the line is kept whole (editors and scripts read it).
TEST(WrapTextTest, KeepsAWordWiderThanTheLineWhole) {
  EXPECT_EQ(WrapText("ab 0123456789abcdef:6:4: bad", 8, 2),
            "ab\n  0123456789abcdef:6:4:\n  bad");
}

TEST(FitColumnsTest, UnchangedWhenTheRowFits) {
  EXPECT_THAT(FitColumns({10, 20, 30}, 64), ElementsAre(10, 20, 30));
}

TEST(FitColumnsTest, TheWidestColumnsGiveUpTheExcess) {
  // 12 + 460 + 30 + 4 gaps: the class column takes what is left.
  EXPECT_THAT(FitColumns({12, 460, 30}, 120), ElementsAre(12, 74, 30));
  // Two wide columns share the cut.
  EXPECT_THAT(FitColumns({200, 200, 4}, 120), ElementsAre(56, 56, 4));
}

TEST(FitColumnsTest, NoColumnBelowTheMinimum) {
  const std::vector<size_t> widths = FitColumns({100, 100, 100, 100}, 20);
  EXPECT_THAT(widths,
              ElementsAre(kMinColumn, kMinColumn, kMinColumn, kMinColumn));
}

TEST(EllipsizedTest, CutCellsEndInDots) {
  EXPECT_EQ(Ellipsized("nvidia_gpu_sm_90", 20), "nvidia_gpu_sm_90");
  EXPECT_EQ(Ellipsized("nvidia_gpu_sm_90", 10), "nvidia_...");
}

}  // namespace
}  // namespace ctxsel::cli
