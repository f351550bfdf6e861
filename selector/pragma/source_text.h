// source_text.h: the logical lines of a C, C++ or Fortran source file.
//
// The pragma importer must not be fooled by comments, string literals or line
// continuations. SplitLogicalLines() does that work once: it splices
// continued lines, replaces comments by a space, keeps string literals whole,
// and remembers for every character where it came from, so later errors can
// name the original line and column. Conditional compilation (`#if`) is the
// preprocessor's (preprocessor.h).
//
// Example:
//
//   std::vector<LogicalLine> lines =
//       SplitLogicalLines("#pragma omp declare \\\n variant(f) /* x */",
//                         Language::kC);
//   // lines[0].text == "#pragma omp declare  variant(f)  "
//   // lines[0].PositionOf(21) (the `v`) is line 2, column 2
#ifndef CTXSEL_SELECTOR_PRAGMA_SOURCE_TEXT_H_
#define CTXSEL_SELECTOR_PRAGMA_SOURCE_TEXT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel::pragma {

enum class Language { kC, kFortran };

// Fortran for .f .for .ftn .f90 .f95 .f03 .f08 (any case), else C/C++.
Language LanguageOf(absl::string_view file_name);

// True for the fixed-form Fortran names .f .for .ftn (any case, so .F too).
bool IsFixedFormName(absl::string_view file_name);

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

// Something the reader of a source should know, at a position.
struct SourceNote {
  Position position;
  std::string message;
};

// Splits `text` into logical lines. C/C++: backslash-newline splices first,
// then `//` and `/* */` comments become one space (a block comment may span
// lines: the logical line goes on), "..." and '...' literals are kept (digit
// separators such as 1'000 are not literals) and raw strings R"d(...)d"
// become "". Fortran free form: `!` comments are dropped except `!$omp`
// directive lines, which keep their sentinel; a line ending in `&` goes on
// with the next (whose leading `&` or `!$omp&` is dropped); strings in '...'
// and "..." are kept. Empty lines are kept, so the lines of a file stay in
// order. Fortran fixed form (`fixed_form`): a `C`, `c`, `*` or `!` in
// column 1 starts a comment line unless columns 1-5 are an OpenMP sentinel
// (`c$omp`, `*$omp`, `!$omp`, any case), which becomes `!$omp`; a character
// other than blank or `0` in column 6 continues the previous line (joined
// with one space); columns 1-5 of code lines are a label and text past
// column 72 is ignored, as compilers do, with a note in `notes` (may be
// null). `#` lines are kept as they are in every language.
std::vector<LogicalLine> SplitLogicalLines(
    absl::string_view text, Language language, bool fixed_form = false,
    std::vector<SourceNote>* notes = nullptr);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_SOURCE_TEXT_H_
