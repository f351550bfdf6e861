// directive.h: recognizes the OpenMP directives that declare variants and
// splits them into clauses.
//
// A C/C++ `#pragma omp ...` or Fortran `!$omp ...` logical line (see
// source_text.h) becomes an OmpDirective: which directive it is, the
// parenthesized argument of `declare variant(...)`, and its clauses with the
// offsets of their text in the line, so that errors inside a clause (a bad
// selector) can be mapped back to the file.
//
// Example:
//
//   std::optional<OmpDirective> d = ParseOmpDirective(
//       line, Language::kC);  // "#pragma omp declare variant(f) match(...)"
//   // d->kind == DirectiveKind::kDeclareVariant, d->error is OK
//   // d->argument == "f"; d->clauses[0].name == "match"
#ifndef CTXSEL_SELECTOR_PRAGMA_DIRECTIVE_H_
#define CTXSEL_SELECTOR_PRAGMA_DIRECTIVE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/pragma/source_text.h"

namespace ctxsel::pragma {

enum class DirectiveKind {
  kDeclareVariant,       // declare variant(f) match(...)
  kBeginDeclareVariant,  // begin declare variant match(...)
  kEndDeclareVariant,
  kMetadirective,       // metadirective when(...) otherwise(...)
  kBeginMetadirective,  // begin metadirective ... (5.1)
  kEndMetadirective,
  kOther,  // any other OpenMP directive
};

// One clause, `name(argument)` or a bare `name`.
struct OmpClause {
  std::string name;
  std::string argument;  // without the parentheses; Fortran: lower case
  bool has_argument = false;
  size_t name_offset = 0;      // offset of `name` in the logical line
  size_t argument_offset = 0;  // offset of argument[0] in the logical line
};

struct OmpDirective {
  DirectiveKind kind = DirectiveKind::kOther;
  size_t offset = 0;  // where the directive's `#` or `!$omp` starts
  // `declare variant(argument)`; empty for other kinds.
  std::string argument;
  size_t argument_offset = 0;
  std::vector<OmpClause> clauses;  // not parsed for kOther
  // A syntax error after the directive name (unbalanced parenthesis, a
  // missing clause around a comma): the kind is known, so a `begin` still
  // pairs with its `end`; `clauses` holds those read before it.
  absl::Status error;
};

// Returns nullopt when `line` is not an OpenMP directive. Fortran directive
// text is lower-cased outside string literals (Fortran is case-insensitive).
// Syntax errors (unbalanced parentheses, a missing `declare variant(...)`
// argument, a comma with no clause before it) are InvalidArgumentError
// "L:C: message" at the original position, in `OmpDirective::error`.
std::optional<OmpDirective> ParseOmpDirective(const LogicalLine& line,
                                              Language language);

// Splits `text` at top-level commas (outside (), [], {} and literals),
// returning each piece with its offset in `text`, whitespace trimmed.
struct Piece {
  std::string text;
  size_t offset = 0;
};
std::vector<Piece> SplitTopLevel(absl::string_view text, char separator);

// The offset of the first `separator` in `text` outside brackets and
// literals, or npos.
size_t FindTopLevel(absl::string_view text, char separator);

// "L:C: message" at the position of `line` offset `offset`.
absl::Status ErrorAt(const LogicalLine& line, size_t offset,
                     absl::string_view message);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_DIRECTIVE_H_
