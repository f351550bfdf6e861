// parser.h: context-selector text -> syntax tree (no semantic checks).
//
// Unknown set, selector and construct names, bracket and trailing-text
// errors, size and nesting limits are reported here; everything the
// vocabulary table says about a well-formed tree is checked by validator.h.
//
// Example:
//   absl::StatusOr<SelectorAst> ast = ParseSyntax("device={kind(gpu)}",
//                                                 Directive::kDeclareVariant);
#ifndef CTXSEL_SELECTOR_PARSER_H_
#define CTXSEL_SELECTOR_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/ast.h"

namespace ctxsel::selector::internal {

absl::StatusOr<SelectorAst> ParseSyntax(absl::string_view text,
                                        Directive directive);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_PARSER_H_
