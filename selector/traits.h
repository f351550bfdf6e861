// traits.h: lookups generated from the trait vocabulary in traits.def.
//
// Example:
//   std::optional<SetId> set = FindSet("device");
//   std::optional<SelectorId> kind = FindSelector(*set, "kind");
//   if (SelectorInfo(*kind).property_required) ...
#ifndef CTXSEL_SELECTOR_TRAITS_H_
#define CTXSEL_SELECTOR_TRAITS_H_

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel::selector::internal {

enum class SetId {
#define TRAIT_SET(Id, Name, ScoreAllowed, Dynamic) Id,
#include "selector/traits.def"
};

enum class SelectorId {
#define TRAIT_SELECTOR(Id, Set, Name, Kind, Required, Weight) Id,
#include "selector/traits.def"
};

// How a selector's properties are written.
enum class PropertyKind {
  kNone,             // no properties (construct selectors but simd)
  kNames,            // name list: identifiers, strings, extensions
  kSimdClauses,      // clauses of declare simd
  kRequiresClauses,  // clauses of requires: name or name(argument)
  kExpression,       // expressions
};

// The score class of a selector (OpenMP 5.1 §2.3.3).
enum class Weight { kZero, kConstructPosition, kKind, kArch, kIsa };

struct SetInfo {
  SetId id;
  absl::string_view name;
  bool score_allowed;
  bool dynamic;
};

struct SelectorInfo {
  SelectorId id;
  SetId set;
  absl::string_view name;
  PropertyKind kind;
  bool property_required;
  Weight weight;
};

const SetInfo& GetSetInfo(SetId id);
const SelectorInfo& GetSelectorInfo(SelectorId id);

// All sets / selectors in table order.
const std::vector<SetInfo>& AllSets();
const std::vector<SelectorInfo>& AllSelectors();

std::optional<SetId> FindSet(absl::string_view name);
// Finds a selector of `set` by name or alias.
std::optional<SelectorId> FindSelector(SetId set, absl::string_view name);
// The selector name `name` stands for in `set`: the selector's own name for
// an alias (`do` -> `for`), else `name` itself. Cheaper than FindSelector.
absl::string_view ResolveAlias(SetId set, absl::string_view name);
// Sets (other than `set`) that have a selector named `name`, for messages.
std::vector<SetId> SetsWithSelector(absl::string_view name);

// True when `name` is in the selector's closed list of properties (always
// true for a selector whose properties are an open list).
bool IsKnownProperty(SelectorId id, absl::string_view name);
// The closed list, for messages ("one of a, b, c").
std::vector<absl::string_view> KnownProperties(SelectorId id);

// Every name a job's construct trait set may hold: the construct selectors,
// their aliases, then the enclosing constructs (TRAIT_ENCLOSING_CONSTRUCT).
std::vector<absl::string_view> JobConstructNames();

// The closed list of the argument of a clause property, e.g. the memory
// orders of requires' atomic_default_mem_order; empty when it takes none.
std::vector<absl::string_view> PropertyArguments(SelectorId id,
                                                 absl::string_view property);

// The selector of `set` whose property `name` may also be written as a
// selector of `set` (`implementation={unified_address}`), if any.
std::optional<SelectorId> FindPropertySelector(SetId set,
                                               absl::string_view name);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_TRAITS_H_
