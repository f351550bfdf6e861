// fortran_expr.h: Fortran expressions in the selectors of Fortran sources.
//
// A Fortran `condition(...)` (or `score(...)`, `device_num(...)`) is written
// in Fortran: `.true.`, `.false.`, `.not.`, `.and.`, `.or.`, `.eqv.`,
// `.neqv.`, `.eq.` `.ne.` `.lt.` `.le.` `.gt.` `.ge.` and `/=`. The selector
// engine reads C-like expressions, so the importer rewrites those arguments
// into C with Fortran's precedence made explicit by parentheses (`.not. a >
// b` is `!(a > b)`; `.eqv.` binds loosest). Every output character keeps
// the position of the Fortran token it came from. The component selector
// `s%n` becomes `s.n` (C's `%` is modulo), which makes a condition
// runtime-only (selector/expr.h). Arguments without a Fortran-only operator
// are left as written.
//
// Example:
//
//   // line.text: "!$omp declare variant(v)
//   //             match(user={condition(n .gt. 4 .and. .not. f)})"
//   absl::StatusOr<LogicalLine> c = TranslateFortranExpressions(line);
//   // c->text: "... condition(((((n)) > ((4))) && (!((f))))) ..."
#ifndef CTXSEL_SELECTOR_PRAGMA_FORTRAN_EXPR_H_
#define CTXSEL_SELECTOR_PRAGMA_FORTRAN_EXPR_H_

#include "absl/status/statusor.h"
#include "selector/pragma/source_text.h"

namespace ctxsel::pragma {

// `line` (a Fortran logical line) with its expression arguments in C; the
// line itself when it has none. Errors are "L:C: message" (an operator
// the engine has no counterpart for, such as `**` or `//`, or a syntax
// error).
absl::StatusOr<LogicalLine> TranslateFortranExpressions(
    const LogicalLine& line);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_FORTRAN_EXPR_H_
