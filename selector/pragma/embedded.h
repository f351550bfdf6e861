// embedded.h: OpenMP directives written inside C/C++ code lines.
//
// Besides `#pragma omp`, a compiler reads the same directives from the
// `_Pragma("omp ...")` operator (C99/C++11) and from the C++ attribute
// syntax of OpenMP 5.1: `[[omp::directive(...)]]`, `[[omp::decl(...)]]`
// (5.2), `[[omp::sequence(directive(...), ...)]]` and
// `[[using omp: directive(...)]]`. SplitEmbeddedDirectives() cuts a code
// line into code pieces and `#pragma omp ...` pieces, in source order, so
// the importer treats both spellings alike. Every character of a directive
// piece keeps its position in the file (the synthesized `#pragma omp `
// prefix takes the position of `_Pragma` or of the attribute).
//
// Example:
//
//   // line.text: "[[omp::directive(declare variant(g) match(...))]] void f();"
//   std::vector<LinePiece> pieces = SplitEmbeddedDirectives(line);
//   // pieces[0]: directive, "#pragma omp declare variant(g) match(...)"
//   // pieces[1]: code, " void f();"
#ifndef CTXSEL_SELECTOR_PRAGMA_EMBEDDED_H_
#define CTXSEL_SELECTOR_PRAGMA_EMBEDDED_H_

#include <vector>

#include "selector/pragma/source_text.h"

namespace ctxsel::pragma {

struct LinePiece {
  bool directive = false;  // a `#pragma omp ...` line; else code
  LogicalLine line;
};

// The pieces of a C/C++ code line; the whole line as one code piece when it
// embeds no directive. `_Pragma`s that are not `omp` are dropped.
std::vector<LinePiece> SplitEmbeddedDirectives(const LogicalLine& line);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_EMBEDDED_H_
