// validator.h: the semantic rules of context selectors (OpenMP 5.1 §2.3.2,
// 5.2 §7.1) on a parsed tree, also run on effective selectors.
//
// Each violation is its own InvalidArgumentError "L:C: message". Also
// evaluates score() expressions into TraitSelector::score.
//
// Example:
//   absl::StatusOr<SelectorAst> ast = ParseSyntax(text, directive);
//   if (ast.ok()) status = Validate(*ast);
#ifndef CTXSEL_SELECTOR_VALIDATOR_H_
#define CTXSEL_SELECTOR_VALIDATOR_H_

#include "absl/status/status.h"
#include "selector/ast.h"

namespace ctxsel::selector::internal {

absl::Status Validate(SelectorAst& ast);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_VALIDATOR_H_
