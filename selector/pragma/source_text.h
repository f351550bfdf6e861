// source_text.h: the logical lines of a C, C++ or Fortran source file.
//
// The pragma importer must not be fooled by comments, string literals, line
// continuations or `#if 0` regions. SplitLogicalLines() does that work once:
// it splices continued lines, replaces comments by a space, keeps string
// literals whole, drops the lines of `#if 0` regions (and `#else` branches of
// `#if 1`), and remembers for every character where it came from, so later
// errors can name the original line and column.
//
// Example:
//
//   std::vector<LogicalLine> lines =
//       SplitLogicalLines("#pragma omp declare \\\n variant(f) /* x */", kC);
//   // lines[0].text == "#pragma omp declare  variant(f)  "
//   // lines[0].PositionOf(20) is line 2, column 2
#ifndef CTXSEL_SELECTOR_PRAGMA_SOURCE_TEXT_H_
#define CTXSEL_SELECTOR_PRAGMA_SOURCE_TEXT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel::pragma {

enum class Language { kC, kFortran };

// Fortran for .f .for .ftn .f90 .f95 .f03 .f08 (any case), else C/C++.
Language LanguageOf(absl::string_view file_name);

// A 1-based position in the original file.
struct Position {
  int line = 1;
  int column = 1;
};

// One logical line: physical lines joined by continuations (C `\`, Fortran
// `&`), comments replaced by a space. `positions[i]` is where `text[i]` came
// from; `end` is the position just past the line (for errors at its end).
struct LogicalLine {
  std::string text;
  std::vector<Position> positions;
  Position end;

  // Where text[index] came from; `end` for index >= text.size().
  Position PositionOf(size_t index) const {
    return index < positions.size() ? positions[index] : end;
  }
};

// Splits `text` into logical lines. C/C++: backslash-newline splices first,
// then `//` and `/* */` comments become one space (a block comment may span
// lines: the logical line goes on), "..." and '...' literals are kept (digit
// separators such as 1'000 are not literals), raw strings R"d(...)d" become
// "" and `#if 0` / `#elif 0` regions and `#else` branches of `#if 1` are
// dropped. Fortran (free form): `!` comments are dropped except `!$omp`
// directive lines, which keep their sentinel; a line ending in `&` goes on
// with the next (whose leading `&` or `!$omp&` is dropped); strings in '...'
// and "..." are kept. Empty lines are kept, so the lines of a file stay in
// order.
std::vector<LogicalLine> SplitLogicalLines(absl::string_view text,
                                           Language language);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_SOURCE_TEXT_H_
