// scorer.h: the OpenMP score of a compatible selector and the strict-subset
// rule (OpenMP 5.1 §2.3.3, 5.2 §7.2).
//
// A construct selector at context position p adds 2^(p-1); `kind`, `arch`,
// `isa` (device or target_device) add 2^l, 2^(l+1), 2^(l+2) once per
// selector, l being the size of the context's construct set; `score(e)` adds
// e; everything else adds 0. `kind(any)` adds nothing. The final score is
// 1 + the sum, or 0 for a strict subset of another compatible selector.
//
// Example:
//   absl::StatusOr<ScoreSum> s = SumScore(ast, match.construct_positions, l);
//   SubsetItems a = ItemsOf(ast_a), b = ItemsOf(ast_b);
//   if (IsStrictSubset(a, b)) score_a = 0;
#ifndef CTXSEL_SELECTOR_SCORER_H_
#define CTXSEL_SELECTOR_SCORER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "selector/ast.h"

namespace ctxsel::selector::internal {

struct ScoreSum {
  uint64_t sum = 0;
  std::vector<ScoreTerm> terms;
};

// Sums the trait values. `construct_positions` are the 1-based positions
// from MatchStatic(); `l` the context's construct count (<= 60). Fails when
// the sum does not fit 64 bits (naming the term). Without `with_terms` only
// the sum is filled (Resolve's path: no strings).
// `options` give a compiler's rules where it departs from the texts
// (selector.h: kind(any) scored, positions from the innermost, l from the
// selector, each kind property scored).
absl::StatusOr<ScoreSum> SumScore(const SelectorAst& ast,
                                  absl::Span<const int> construct_positions,
                                  int l, bool with_terms = true,
                                  const ResolveOptions& options = {});

// Fills `req`'s weight counts from `ast` (StaticRequirements in ast.h, the
// rules SumScore applies); false when the explicit scores overflow 64 bits.
bool CountWeights(const SelectorAst& ast, StaticRequirements& req);

// 2^(shift), or 0 when it does not fit (never for l <= kMaxConstructTraits).
inline uint64_t Pow2(int shift) {
  return shift < 64 ? uint64_t{1} << shift : 0;
}

// What a construct selector at position `p` of `context_l` adds.
inline uint64_t ConstructValue(int p, int context_l,
                               const ResolveOptions& options) {
  return Pow2(options.positions_from_innermost ? context_l - p : p - 1);
}

// SumScore's sum from the counts CountWeights kept, or false when it does
// not fit 64 bits (SumScore then names the term).
inline bool SumScoreByIds(const StaticRequirements& req,
                          absl::Span<const int> construct_positions, int l,
                          const ResolveOptions& options, uint64_t* sum) {
  const int context_l = l;
  if (options.l_from_selector) l = static_cast<int>(construct_positions.size());
  const uint64_t kinds =
      options.kind_per_property
          ? (options.kind_any_scored ? req.kind_properties
                                     : req.kind_properties_scored)
          : (options.kind_any_scored ? req.kind_selectors
                                     : req.kind_selectors_scored);
  uint64_t total = req.explicit_scores, term;
  for (int p : construct_positions) {
    if (__builtin_add_overflow(total, ConstructValue(p, context_l, options),
                               &total)) {
      return false;
    }
  }
  for (auto [count, shift] : {std::pair<uint64_t, int>{kinds, l},
                              {req.arch, l + 1},
                              {req.isa, l + 2}}) {
    if (count == 0) continue;
    if (__builtin_mul_overflow(count, Pow2(shift), &term) ||
        __builtin_add_overflow(total, term, &total)) {
      return false;
    }
  }
  *sum = total;
  return true;
}

// The items of `ast` for the strict-subset test (SubsetItems in ast.h);
// Selector::Parse stores them in the syntax tree once. With
// `kind_any_scored`, `kind(any)` is an item like any kind.
SubsetItems ItemsOf(const SelectorAst& ast, bool kind_any_scored = false);

// True when every item of `a` is in `b`, `a`'s constructs are an ordered
// subsequence of `b`'s, trait by trait (a construct of `a` stands for one of
// `b` with the same name and at least its clauses: GCC's reading, so
// `simd` is a subset of `simd(simdlen(4))`), and `b` names more.
bool IsStrictSubset(const SubsetItems& a, const SubsetItems& b);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_SCORER_H_
