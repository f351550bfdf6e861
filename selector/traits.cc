#include "selector/traits.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace ctxsel::selector::internal {
namespace {

struct PropertyEntry {
  SelectorId selector;
  absl::string_view name;
};

struct AliasEntry {
  SelectorId selector;
  absl::string_view name;
};

struct ArgumentEntry {
  SelectorId selector;
  absl::string_view property;
  absl::string_view argument;
};

const std::vector<PropertyEntry>& Properties() {
  static const auto* table = new std::vector<PropertyEntry>{
#define TRAIT_PROPERTY(Selector, Name) {SelectorId::Selector, Name},
#include "selector/traits.def"
  };
  return *table;
}

const std::vector<ArgumentEntry>& Arguments() {
  static const auto* table = new std::vector<ArgumentEntry>{
#define TRAIT_PROPERTY_ARGUMENT(Selector, Property, Argument) \
  {SelectorId::Selector, Property, Argument},
#include "selector/traits.def"
  };
  return *table;
}

// Properties that may be written as selectors of their selector's set.
const std::vector<PropertyEntry>& PropertySelectors() {
  static const auto* table = new std::vector<PropertyEntry>{
#define TRAIT_PROPERTY_SELECTOR(Selector, Property) \
  {SelectorId::Selector, Property},
#include "selector/traits.def"
  };
  return *table;
}

// A constant table: no guarded static on the path Resolve takes per name
// (ResolveAlias).
constexpr AliasEntry kAliases[] = {
#define TRAIT_ALIAS(Selector, Name) {SelectorId::Selector, Name},
#include "selector/traits.def"
};

}  // namespace

const std::vector<SetInfo>& AllSets() {
  static const auto* table = new std::vector<SetInfo>{
#define TRAIT_SET(Id, Name, ScoreAllowed, Dynamic) \
  {SetId::Id, Name, ScoreAllowed, Dynamic},
#include "selector/traits.def"
  };
  return *table;
}

const std::vector<SelectorInfo>& AllSelectors() {
  static const auto* table = new std::vector<SelectorInfo>{
#define TRAIT_SELECTOR(Id, Set, Name, Kind, Required, W) \
  {SelectorId::Id, SetId::Set, Name, PropertyKind::Kind, Required, Weight::W},
#include "selector/traits.def"
  };
  return *table;
}

const SetInfo& GetSetInfo(SetId id) { return AllSets()[static_cast<int>(id)]; }

const SelectorInfo& GetSelectorInfo(SelectorId id) {
  return AllSelectors()[static_cast<int>(id)];
}

std::optional<SetId> FindSet(absl::string_view name) {
  for (const SetInfo& info : AllSets()) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

std::optional<SelectorId> FindSelector(SetId set, absl::string_view name) {
  // Built once from the table: the parser looks up every selector name it
  // reads. (Resolve reads context construct names with ResolveAlias.)
  using Index =
      absl::flat_hash_map<std::pair<SetId, absl::string_view>, SelectorId>;
  static const Index* const kIndex = [] {
    auto* index = new Index;
    for (const SelectorInfo& info : AllSelectors()) {
      index->try_emplace({info.set, info.name}, info.id);
    }
    for (const AliasEntry& alias : kAliases) {
      index->try_emplace({GetSelectorInfo(alias.selector).set, alias.name},
                         alias.selector);
    }
    return index;
  }();
  auto it = kIndex->find(std::make_pair(set, name));
  if (it == kIndex->end()) return std::nullopt;
  return it->second;
}

absl::string_view ResolveAlias(SetId set, absl::string_view name) {
  for (const AliasEntry& alias : kAliases) {
    if (alias.name != name) continue;
    const SelectorInfo& info = GetSelectorInfo(alias.selector);
    if (info.set == set) return info.name;
  }
  return name;
}

std::vector<SetId> SetsWithSelector(absl::string_view name) {
  std::vector<SetId> sets;
  for (const SelectorInfo& info : AllSelectors()) {
    if (info.name == name &&
        std::find(sets.begin(), sets.end(), info.set) == sets.end()) {
      sets.push_back(info.set);
    }
  }
  return sets;
}

bool IsKnownProperty(SelectorId id, absl::string_view name) {
  bool closed = false;
  for (const PropertyEntry& p : Properties()) {
    if (p.selector != id) continue;
    closed = true;
    if (p.name == name) return true;
  }
  return !closed;
}

std::vector<absl::string_view> KnownProperties(SelectorId id) {
  std::vector<absl::string_view> names;
  for (const PropertyEntry& p : Properties()) {
    if (p.selector == id) names.push_back(p.name);
  }
  return names;
}

std::vector<absl::string_view> JobConstructNames() {
  std::vector<absl::string_view> names;
  for (const SelectorInfo& info : AllSelectors()) {
    if (info.set == SetId::kConstruct) names.push_back(info.name);
  }
  for (const AliasEntry& alias : kAliases) {
    if (GetSelectorInfo(alias.selector).set == SetId::kConstruct) {
      names.push_back(alias.name);
    }
  }
#define TRAIT_ENCLOSING_CONSTRUCT(Name) names.push_back(Name);
#include "selector/traits.def"
  return names;
}

std::vector<absl::string_view> PropertyArguments(SelectorId id,
                                                 absl::string_view property) {
  std::vector<absl::string_view> arguments;
  for (const ArgumentEntry& a : Arguments()) {
    if (a.selector == id && a.property == property) {
      arguments.push_back(a.argument);
    }
  }
  return arguments;
}

std::optional<SelectorId> FindPropertySelector(SetId set,
                                               absl::string_view name) {
  for (const PropertyEntry& p : PropertySelectors()) {
    if (p.name == name && GetSelectorInfo(p.selector).set == set) {
      return p.selector;
    }
  }
  return std::nullopt;
}

}  // namespace ctxsel::selector::internal
