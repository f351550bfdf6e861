// canonical.h: the canonical text of a validated selector, and its
// static/dynamic classification.
//
// Sets print in vocabulary order, selectors of unordered sets in vocabulary
// order, name lists sorted, simd clauses in a fixed order, constant
// conditions as `true`/`false`; construct order is kept. Two selectors are
// equivalent iff their canonical texts are equal, and the canonical text
// parses back to itself.
//
// Example:
//   Finalize(ast);  // fills ast.canonical, ast.dynamic, ...
#ifndef CTXSEL_SELECTOR_CANONICAL_H_
#define CTXSEL_SELECTOR_CANONICAL_H_

#include <string>

#include "selector/ast.h"

namespace ctxsel::selector::internal {

// Canonical text of one trait selector, e.g. "kind(gpu, nohost)".
std::string SelectorText(const TraitSelector& t);

// Canonical text of one property of a name-list selector: identifiers and
// extensions bare, anything else as a string literal.
std::string NameText(absl::string_view name, bool extension);

// Canonical text of any name-list or requires property:
// `atomic_default_mem_order(seq_cst)`, `"core-avx512"`, `f(a,1)`.
std::string PropertyText(const NameProperty& p);

// Fills ast.canonical, ast.dynamic and ast.has_target_device.
void Finalize(SelectorAst& ast);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_CANONICAL_H_
