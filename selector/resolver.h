// resolver.h: what Resolve() keeps for Select() and Explain().
//
// Internal to the engine; see selector.h for the API.
#ifndef CTXSEL_SELECTOR_RESOLVER_H_
#define CTXSEL_SELECTOR_RESOLVER_H_

#include <vector>

#include "selector/ast.h"
#include "selector/matcher.h"
#include "selector/scorer.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {

// Static facts about one declared candidate.
struct CandidateState {
  StaticMatch match;
  ScoreSum sum;
  uint64_t score = 0;  // final: 0 when incompatible or a strict subset
  int subset_of = -1;  // declaration index of the superset, when demoted
  int rank = -1;       // index in ResolutionData::sorted, -1 when not there
};

struct ResolutionData {
  std::vector<Candidate> declared;
  std::vector<CandidateState> states;  // parallel to `declared`
  std::vector<Resolution::Entry> sorted;
  size_t prefix = 0;
  std::vector<const SelectorAst*> prefix_asts;  // sorted[0..prefix) selectors
};

// Fails when the context has more than kMaxConstructTraits constructs.
absl::Status CheckContextSize(const Context& context);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_RESOLVER_H_
