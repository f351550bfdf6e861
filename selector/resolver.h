// resolver.h: what Resolve() keeps for Select() and Explain().
//
// Internal to the engine; see selector.h for the API. Resolve builds no
// strings: the reasons and score terms Explain shows are computed again
// from the static context the Resolution keeps (shared, not copied).
#ifndef CTXSEL_SELECTOR_RESOLVER_H_
#define CTXSEL_SELECTOR_RESOLVER_H_

#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "selector/ast.h"
#include "selector/matcher.h"
#include "selector/scorer.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {

// Static facts about one declared candidate.
struct CandidateState {
  bool compatible = false;  // the static part holds
  bool dynamic = false;     // the selector is dynamic (read while in cache)
  uint64_t score = 0;       // final: 0 when incompatible or a strict subset
  int subset_of = -1;       // declaration index of the superset, when demoted
  int rank = -1;  // index in ResolutionData::sorted, -1 when not there
};

struct ResolutionData {
  // User-provided: allocate_shared would otherwise zero the inline buffers
  // before constructing them (value-initialisation), a third of Resolve.
  ResolutionData() {}  // NOLINT(modernize-use-equals-default)

  CandidateList declared;
  std::shared_ptr<const Context> context;  // the static context resolved for
  // Small inline buffers: a typical kernel's Resolution is one allocation.
  absl::InlinedVector<CandidateState, 8> states;  // parallel to `declared`
  absl::InlinedVector<Resolution::Entry, 8> sorted;
  size_t prefix = 0;
  ResolveOptions options;
  // What Select reads of sorted[0..prefix): pointers into the declared
  // selectors (kept alive by `declared`), so that Resolve copies no
  // DynamicPart and the Resolution frees none.
  struct PrefixPart {
    const DynamicPart* part = nullptr;  // null for a static entry
    // The compiler calls the base function instead of this candidate
    // (ResolveOptions::simd_variant_calls_base).
    bool calls_base = false;
  };
  absl::InlinedVector<PrefixPart, 2> prefix_parts;
};

// Fails when the context has more than kMaxConstructTraits constructs.
absl::Status CheckContextSize(const Context& context);

// Where the construct set `options` see starts in context.construct: at the
// innermost `target` (the texts), 0 (keep_constructs_outside_target) or the
// end (empty_construct_set).
size_t ConstructSetStart(const Context& context, const ResolveOptions& options);
// The same from the set's size and InnermostTarget() (compiled.h).
size_t ConstructSetStart(size_t size, size_t innermost_target,
                         const ResolveOptions& options);
// `context`, or a copy whose construct set starts at `start`.
std::shared_ptr<const Context> WithConstructSet(
    std::shared_ptr<const Context> context, size_t start);

// True when the selector's construct set names `simd`.
bool NamesSimd(const SelectorAst& ast);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_RESOLVER_H_
