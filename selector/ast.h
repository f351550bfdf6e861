// ast.h: the syntax tree of a context selector, shared by the engine's files.
//
// Built by the parser (parser.h), checked by the validator (validator.h),
// printed canonically by canonical.h, read by the matcher and scorer. Callers
// of the library never see it (selector.h hides it behind Selector).
#ifndef CTXSEL_SELECTOR_AST_H_
#define CTXSEL_SELECTOR_AST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "selector/expr.h"
#include "selector/lexer.h"
#include "selector/selector.h"
#include "selector/traits.h"

namespace ctxsel::selector::internal {

// A name-list property: an identifier, a string literal's contents, or an
// extension `name(args...)` in canonical text. For a requires clause, the
// clause name and its arguments (`atomic_default_mem_order(seq_cst)`).
struct NameProperty {
  std::string name;
  Pos pos;
  bool extension = false;               // written `name(args...)`
  std::vector<NameProperty> arguments;  // requires clauses only
};

// The clauses of a construct `simd` selector; every variable keeps its
// position, so that restriction errors point at it.
struct SimdProperties {
  struct Variable {
    std::string name;
    Pos pos;
  };
  struct Aligned {
    std::string variable;
    int64_t alignment = 0;  // 0: implementation default (matches any)
    Pos pos;
  };
  struct Linear {
    std::string variable;
    LinearStep step;  // 1 when the clause gives none
    Pos pos;
    Pos step_pos;
  };
  int64_t simdlen = 0;  // 0: not given
  std::vector<Aligned> aligned;
  std::vector<Linear> linear;
  std::vector<Variable> uniform;
  bool inbranch = false;
  bool notinbranch = false;
  // Clause names in source order with positions, for validation.
  std::vector<NameProperty> clauses;
};

struct TraitSelector {
  SelectorId id{};
  Pos pos;
  bool has_score = false;
  int64_t score = 0;
  Pos score_pos;
  std::optional<Expression> score_expr;
  std::vector<NameProperty> names;      // kNames, kRequiresClauses
  std::vector<Expression> expressions;  // kExpression
  SimdProperties simd;                  // kSimdClauses
  bool has_properties = false;          // parentheses were given
  // Written as a property (`unified_address`,
  // `atomic_default_mem_order(score(3): seq_cst)`, the 5.0 spellings), not
  // as `requires(...)`. One with a score of its own stays a selector of its
  // own, so that its score is not given to the other requirements.
  bool property_spelling = false;
};

struct TraitSet {
  SetId id{};
  Pos pos;
  std::vector<TraitSelector> selectors;
};

// What a selector names, for the strict-subset test: (set, selector,
// property, score) items of the non-construct sets — constant conditions by
// truth value, `kind(any)` left out — and the ordered construct selectors,
// each with its clauses (simd's `simdlen(8)`, `linear(i:2)`, ... one item
// per variable). Built by ItemsOf (scorer.h).
struct SubsetItems {
  struct Construct {
    SelectorId id{};
    std::vector<std::string> clauses;  // sorted, unique
  };
  std::vector<std::string> items;     // sorted, unique
  std::vector<Construct> constructs;  // in selector order
  // The same as interned ids (compiled.h), each list sorted by id: what
  // IsStrictSubset compares. Empty, and by_ids false, when a name had no
  // id (the interner was full): the strings are compared then.
  std::vector<uint32_t> item_ids;
  std::vector<std::vector<uint32_t>> clause_ids;  // parallel to constructs
  bool by_ids = true;
};

// The dynamic part of one selector (non-constant conditions, the
// target_device set), flattened once when the selector is built, so that
// Resolve copies a few pointers per candidate and Select() reaches the
// expressions without walking the syntax tree. Points into the syntax tree
// it was made from.
struct DynamicPart {
  // The non-constant conditions Select can evaluate, in selector order.
  absl::InlinedVector<const Expression*, 1> conditions;
  bool runtime_only = false;  // has a runtime-only condition
  // A condition reads a device variable (device_variables.h): its verdict
  // differs between device classes, so requests do not share it.
  bool reads_device = false;
  const TraitSet* target_device = nullptr;  // null: none
};

// The static part of a selector as interned ids (compiled.h), built once
// with the selector, in the shape of LLVM's VariantMatchInfo: Resolve tests
// set inclusion against a context's active traits (ContextTraits) and sums
// precounted weights, without walking the syntax tree. A selector the ids
// cannot express (simd clauses, a requires argument) has `by_ids` false and
// takes MatchStatic's path.
struct StaticRequirements {
  bool by_ids = false;
  bool never = false;  // a constant condition is false
  // TraitKey()s that must all be active in the context.
  absl::InlinedVector<uint32_t, 3> keys;
  // The construct selectors in order (none with simd clauses).
  absl::InlinedVector<SelectorId, 3> constructs;
  // Weight counts (scorer.h): kind selectors (all / scored under the
  // texts), kind properties (all / other than `any`), arch and isa
  // selectors, and the explicit scores' sum.
  uint16_t kind_selectors = 0, kind_selectors_scored = 0;
  uint16_t kind_properties = 0, kind_properties_scored = 0;
  uint16_t arch = 0, isa = 0;
  uint64_t explicit_scores = 0;
};

struct SelectorAst {
  Directive directive = Directive::kDeclareVariant;
  std::vector<TraitSet> sets;
  bool dynamic = false;
  bool has_target_device = false;
  std::string canonical;
  // How many selector texts its positions refer to: 1 for a parsed
  // selector, more for an effective one (TextPosition::text).
  int text_count = 1;
  // ItemsOf(*this), computed once when the selector is built: Resolve
  // compares them for every pair of compatible candidates.
  SubsetItems subset_items;
  // Set when the selector is built (selector.cc), pointing into this tree.
  DynamicPart dynamic_part;
  StaticRequirements requirements;

  const TraitSet* FindSet(SetId id) const {
    for (const TraitSet& s : sets) {
      if (s.id == id) return &s;
    }
    return nullptr;
  }
};

// The property count of a selector, whatever its kind.
inline size_t PropertyCount(const TraitSelector& t) {
  return t.names.size() + t.expressions.size() + t.simd.clauses.size();
}

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_AST_H_
