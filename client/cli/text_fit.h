// text_fit.h: how ctxsel-cli's output fits a terminal. By default every
// table fits kTableWidth columns (its widest cells cut with "...", its last
// column wrapped), every message and explanation is wrapped there, and help
// text at kHelpWidth;
// -o wide prints tables and explanations whole (OutputFormat::kWide).
//
//   std::vector<size_t> widths = FitColumns({12, 460, 30}, kTableWidth);
//   // {12, 74, 30}: the wide column gives up what the line is too long.
//   std::fputs(WrapText(explanation, kTableWidth).c_str(), stdout);
#ifndef CTXSEL_CLIENT_CLI_TEXT_FIT_H_
#define CTXSEL_CLIENT_CLI_TEXT_FIT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel::cli {

// Tables, messages and explanations (the common terminal's 80 would cut
// most device ids and layouts; 120 keeps one row to a line).
inline constexpr size_t kTableWidth = 120;
// Help and usage text, read as prose: an 80-column terminal's lines.
inline constexpr size_t kHelpWidth = 79;
// The two spaces between table columns.
inline constexpr size_t kColumnGap = 2;

// `text` with each line longer than `width` broken at spaces, after a
// clause ("; ") where one fits on the line; the lines a line is broken into
// after its first are indented by its own indent plus `hang`. A word longer
// than a line (a long path) is never cut: it gets a line of its own, the
// one case where a line stays wider. Lines that fit, and the newlines, are
// kept as they are.
std::string WrapText(absl::string_view text, size_t width, size_t hang = 4);

// Widths for columns whose widest cells are `natural`, separated by
// kColumnGap, so that a row fits `width`: the widest columns narrow first,
// to no less than kMinColumn (or their natural width); unchanged when the
// row already fits.
inline constexpr size_t kMinColumn = 12;
std::vector<size_t> FitColumns(std::vector<size_t> natural, size_t width);

// What a table's last column asks for when the others are fitted: it wraps
// (WrapText) instead of being cut, and takes whatever room is left.
inline constexpr size_t kWrappedColumn = 40;

// `cell` when it fits `width`, else its first width - 3 characters and
// "...".
std::string Ellipsized(absl::string_view cell, size_t width);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_TEXT_FIT_H_
