// matcher.h: is a selector's trait set active in an OpenMP context?
//
// Split the way declare-variant resolution needs it: MatchStatic() checks
// the construct, device and implementation sets and constant conditions
// (done once per resolution); MatchDynamic() checks non-constant conditions
// and the target_device set, with a reason (MatchSelector, Explain). Select
// takes the same decision per request from a DynamicPart flattened at
// Resolve (DynamicPartOf, MatchDynamicPartGiven), without walking the tree.
//
// Example:
//   StaticMatch m = MatchStatic(selector.ast(), context);
//   if (m.compatible && MatchDynamic(selector.ast(), vars, devices, nullptr) ==
//                           DynamicMatch::kHolds)
#ifndef CTXSEL_SELECTOR_MATCHER_H_
#define CTXSEL_SELECTOR_MATCHER_H_

#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "selector/ast.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {

struct StaticMatch {
  bool compatible = false;
  // First failing trait when not compatible (only when asked for).
  std::string reason;
  // 1-based context positions of the construct selectors in their
  // highest-valued ordered embedding (or, when asked, the lowest).
  absl::InlinedVector<int, 8> construct_positions;
};

// The construct selector each entry of a context's construct set stands
// for (`do` is `for`), by name; an enclosing construct keeps its own name.
// Computed once per context, not once per comparison.
using ConstructNames = absl::InlinedVector<absl::string_view, 8>;
ConstructNames ConstructNamesOf(const Context& context);

// Matches the static part of `ast` against `context` (construct, device,
// implementation, constant user conditions). `construct_names` is
// ConstructNamesOf(context). Without `with_reason` it builds no strings
// (Resolve's path; Explain asks again for the reason). With
// `lowest_embedding` (ResolveOptions) the constructs take their lowest
// positions.
StaticMatch MatchStatic(const SelectorAst& ast, const Context& context,
                        const ConstructNames& construct_names, bool with_reason,
                        bool lowest_embedding = false);
inline StaticMatch MatchStatic(const SelectorAst& ast, const Context& context,
                               bool lowest_embedding = false) {
  return MatchStatic(ast, context, ConstructNamesOf(context), true,
                     lowest_embedding);
}

enum class DynamicMatch {
  kFails,
  kHolds,
  // Everything the service can evaluate holds, but a runtime-only condition
  // remains: only the program can tell, so the service never chooses it.
  kProgramDecides,
};

// Matches the dynamic part (non-constant conditions, target_device). When
// it does not hold and `reason` is not null, stores why: the failing trait,
// or "runtime-only condition(foo()): the program decides".
DynamicMatch MatchDynamic(const SelectorAst& ast, const Variables& variables,
                          TargetDevicesView devices, std::string* reason);

// The dynamic part of one selector flattened when it is resolved, so that
// Select() reaches its expressions without walking the syntax tree (whose
// nodes are, on a server with many kernels, rarely in cache): the
// conditions are copied, their nodes allocated beside the Resolution's.
struct DynamicPart {
  // The non-constant conditions Select can evaluate, in selector order.
  absl::InlinedVector<Expression, 1> conditions;
  bool runtime_only = false;  // has a runtime-only condition
  // A condition reads a device variable (device_variables.h): its verdict
  // differs between device classes, so requests do not share it.
  bool reads_device = false;
  const TraitSet* target_device = nullptr;  // null: none
  // The compiler calls the base function instead of this candidate
  // (ResolveOptions::simd_variant_calls_base); set by Resolve.
  bool calls_base = false;
};
DynamicPart DynamicPartOf(const SelectorAst& ast);

// MatchDynamic's verdict for the selector `part` was made from, without a
// reason: what Select() computes through MatchDynamicPartGiven (tests hold
// the two paths to the same answers).
DynamicMatch MatchDynamicPart(const DynamicPart& part,
                              const Variables& variables,
                              TargetDevicesView devices);
// Its two steps: whether every condition of `part` is nonzero for
// `variables` (the same on every device class), and the verdict once that
// is known.
bool ConditionsHold(const DynamicPart& part, const Variables& variables);
DynamicMatch MatchDynamicPartGiven(bool conditions_hold,
                                   const DynamicPart& part,
                                   const Variables& variables,
                                   TargetDevicesView devices);

// "{a, b}" with sorted names, for reasons.
std::string SetText(const NameSet& names);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_MATCHER_H_
