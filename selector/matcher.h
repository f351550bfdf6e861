// matcher.h: is a selector's trait set active in an OpenMP context?
//
// Split the way declare-variant resolution needs it: MatchStatic() checks
// the construct, device and implementation sets and constant conditions
// (done once per resolution; Resolve asks MatchStaticByIds first, which
// compares interned ids and falls back to it only for what ids cannot
// express); MatchDynamic() checks non-constant conditions and the
// target_device set, with a reason (MatchSelector, Explain). Select takes
// the same decision per request from the DynamicPart each selector flattens
// when it is built (DynamicPartOf, MatchDynamicPartGiven), without walking
// the tree.
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
#include "selector/compiled.h"
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

// Highest-valued ordered embedding of `n` selectors in `m` constructs,
// `matches(i, j)` saying whether selector i stands for construct j: the
// earliest embedding bounds each selector from below; then each selector,
// last first, takes the latest matching position before its successor's.
// With `lowest` (GCC 12, clang 14) the earliest embedding itself. Returns
// the selector with no place, or n with its 1-based positions filled.
template <typename Matches>
size_t Embed(size_t n, size_t m, const Matches& matches, bool lowest,
             absl::InlinedVector<int, 8>& positions) {
  absl::InlinedVector<int, 8> earliest(n);
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    while (j < m && !matches(i, j)) ++j;
    if (j == m) return i;
    earliest[i] = static_cast<int>(j++);
  }
  positions.assign(n, 0);
  if (lowest) {
    for (size_t k = 0; k < n; ++k) positions[k] = earliest[k] + 1;
    return n;
  }
  int bound = static_cast<int>(m);
  for (size_t k = n; k-- > 0;) {
    int p = bound - 1;
    while (p > earliest[k] && !matches(k, static_cast<size_t>(p))) --p;
    positions[k] = p + 1;
    bound = p;
  }
  return n;
}

// MatchStatic's verdict from the selector's StaticRequirements and the
// context's ContextTraits (compiled.h), whose construct set starts at
// `construct_start`: no reason is built and no string compared. kCannot
// when the ids cannot express the selector (call MatchStatic).
enum class ByIds { kCompatible, kIncompatible, kCannot };
inline ByIds MatchStaticByIds(const SelectorAst& ast,
                              const ContextTraits& traits,
                              size_t construct_start, bool lowest_embedding,
                              StaticMatch& out) {
  const StaticRequirements& req = ast.requirements;
  if (!req.by_ids) return ByIds::kCannot;
  if (req.never || !traits.HasAll(req.keys)) return ByIds::kIncompatible;
  if (!req.constructs.empty()) {
    const int* cs = traits.constructs.data() + construct_start;
    const size_t n = req.constructs.size();
    if (Embed(
            n, traits.constructs.size() - construct_start,
            [&](size_t i, size_t j) {
              return cs[j] == static_cast<int>(req.constructs[i]);
            },
            lowest_embedding, out.construct_positions) != n) {
      return ByIds::kIncompatible;
    }
  }
  out.compatible = true;
  return ByIds::kCompatible;
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

// The dynamic part of `ast` (DynamicPart in ast.h), pointing into it; the
// selector keeps it (SelectorAst::dynamic_part).
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
