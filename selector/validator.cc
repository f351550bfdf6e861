#include "selector/validator.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ctxsel::selector::internal {
namespace {

absl::string_view SetName(SetId id) { return GetSetInfo(id).name; }
absl::string_view SelName(SelectorId id) { return GetSelectorInfo(id).name; }

absl::Status CheckScore(SetId set, TraitSelector& t) {
  if (!t.has_score) return absl::OkStatus();
  if (!GetSetInfo(set).score_allowed) {
    return ErrorAt(t.score_pos, absl::StrCat("score() is not allowed in the ",
                                             SetName(set), " trait set"));
  }
  if (!t.score_expr) return absl::OkStatus();  // already evaluated
  const Expression& e = *t.score_expr;
  if (!e.constant()) {
    return ErrorAt(e.pos(), absl::StrCat("score must be a constant expression,"
                                         " got '",
                                         e.text(), "'"));
  }
  if (e.value() < 0) {
    return ErrorAt(e.pos(),
                   absl::StrCat("score must be non-negative, got ", e.value()));
  }
  t.score = e.value();
  return absl::OkStatus();
}

// A requires clause: atomic_default_mem_order takes exactly one of its
// memory orders, the others take no argument (the table says which).
absl::Status CheckClauseArguments(const TraitSelector& t,
                                  const NameProperty& p) {
  std::vector<absl::string_view> known = PropertyArguments(t.id, p.name);
  if (known.empty()) {
    if (p.arguments.empty()) return absl::OkStatus();
    return ErrorAt(p.arguments[0].pos,
                   absl::StrCat(p.name, " takes no arguments"));
  }
  std::string one_of = absl::StrCat(p.name, " takes exactly one of ",
                                    absl::StrJoin(known, ", "));
  if (p.arguments.size() != 1) {
    return ErrorAt(p.arguments.empty() ? p.pos : p.arguments[1].pos, one_of);
  }
  const NameProperty& argument = p.arguments[0];
  if (std::find(known.begin(), known.end(), argument.name) == known.end()) {
    return ErrorAt(
        argument.pos,
        absl::StrCat("unknown ", p.name, " property '", argument.name,
                     "' (expected one of ", absl::StrJoin(known, ", "), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckNames(const TraitSelector& t) {
  absl::string_view sel = SelName(t.id);
  const bool clauses =
      GetSelectorInfo(t.id).kind == PropertyKind::kRequiresClauses;
  absl::flat_hash_map<std::string, Pos> seen;
  for (const NameProperty& p : t.names) {
    if (auto [it, fresh] = seen.emplace(p.name, p.pos); !fresh) {
      return ErrorAt(
          p.pos, absl::StrCat("property '", p.name, "' given twice in ", sel),
          it->second);
    }
    if (p.extension && t.id != SelectorId::kDeviceExtension &&
        t.id != SelectorId::kTargetDeviceExtension &&
        t.id != SelectorId::kImplExtension) {
      return ErrorAt(p.pos, absl::StrCat("'", p.name,
                                         "' is not a name; only "
                                         "extension takes name(args)"));
    }
    if (!IsKnownProperty(t.id, p.name)) {
      return ErrorAt(
          p.pos, absl::StrCat("unknown ", sel, " property '", p.name,
                              "' (expected one of ",
                              absl::StrJoin(KnownProperties(t.id), ", "), ")"));
    }
    if (clauses) {
      CTXSEL_RETURN_IF_ERROR(CheckClauseArguments(t, p));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckKind(const TraitSet& set, const TraitSelector& t) {
  auto any =
      std::find_if(t.names.begin(), t.names.end(),
                   [](const NameProperty& p) { return p.name == "any"; });
  if (any == t.names.end()) return absl::OkStatus();
  for (const NameProperty& p : t.names) {
    if (p.name == "host" || p.name == "nohost") {
      return ErrorAt(
          p.pos, absl::StrCat("kind(any) cannot be combined with ", p.name));
    }
    if (p.name != "any") {
      return ErrorAt(p.pos, absl::StrCat("kind(any) must be the only kind "
                                         "property, found ",
                                         p.name));
    }
  }
  for (const TraitSelector& other : set.selectors) {
    if (&other == &t || other.id == SelectorId::kTargetDeviceNum) continue;
    return ErrorAt(other.pos,
                   absl::StrCat("kind(any) excludes every other trait "
                                "selector in the ",
                                SetName(set.id), " trait set, found '",
                                SelName(other.id), "'"));
  }
  return absl::OkStatus();
}

// A variable used where it was used already: the later use, with the first.
struct Repeat {
  const std::string* name = nullptr;
  Pos pos, first;
};

std::optional<Repeat> FindRepeat(
    std::vector<std::pair<Pos, const std::string*>> uses) {
  std::sort(uses.begin(), uses.end(), [](const auto& a, const auto& b) {
    return Before(a.first, b.first);
  });
  absl::flat_hash_map<absl::string_view, Pos> seen;
  for (const auto& [pos, name] : uses) {
    if (auto [it, fresh] = seen.emplace(*name, pos); !fresh) {
      return Repeat{name, pos, it->second};
    }
  }
  return std::nullopt;
}

// The declare simd restrictions (OpenMP 5.2 §7.7): an argument appears in
// at most one uniform or linear clause and in at most one aligned clause
// (uniform and aligned together are fine); a linear step that is a
// variable must be uniform.
absl::Status CheckSimdVariables(const SimdProperties& simd) {
  std::vector<std::pair<Pos, const std::string*>> uniform_or_linear, aligned;
  absl::flat_hash_set<absl::string_view> uniform;
  for (const auto& u : simd.uniform) {
    uniform_or_linear.push_back({u.pos, &u.name});
    uniform.insert(u.name);
  }
  for (const auto& l : simd.linear) {
    uniform_or_linear.push_back({l.pos, &l.variable});
  }
  for (const auto& a : simd.aligned) aligned.push_back({a.pos, &a.variable});
  for (auto [uses, clauses] :
       {std::make_pair(&uniform_or_linear, "uniform or linear clause"),
        std::make_pair(&aligned, "aligned clause")}) {
    if (std::optional<Repeat> r = FindRepeat(*uses)) {
      return ErrorAt(r->pos,
                     absl::StrCat("variable '", *r->name,
                                  "' appears in more than one ", clauses),
                     r->first);
    }
  }
  for (const auto& l : simd.linear) {
    if (!l.step.uniform.empty() && !uniform.contains(l.step.uniform)) {
      return ErrorAt(l.step_pos,
                     absl::StrCat("linear step '", l.step.uniform,
                                  "' is not in a uniform clause of this simd "
                                  "(a step is an integer constant or a "
                                  "uniform variable)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSimd(Directive directive, const TraitSelector& t) {
  if (directive == Directive::kBeginDeclareVariant) {
    return ErrorAt(t.pos,
                   "construct={simd} is not allowed in begin declare "
                   "variant");
  }
  const SimdProperties& simd = t.simd;
  if (directive == Directive::kMetadirective && !simd.clauses.empty()) {
    return ErrorAt(simd.clauses[0].pos,
                   "simd takes no properties in a metadirective selector");
  }
  absl::flat_hash_map<std::string, Pos> seen;
  for (const NameProperty& c : simd.clauses) {
    bool list =
        c.name == "aligned" || c.name == "linear" || c.name == "uniform";
    if (auto [it, fresh] = seen.emplace(c.name, c.pos); !fresh && !list) {
      return ErrorAt(c.pos,
                     absl::StrCat("simd clause '", c.name, "' given twice"),
                     it->second);
    }
    bool branch = c.name == "inbranch" || c.name == "notinbranch";
    absl::string_view other = c.name == "inbranch" ? "notinbranch" : "inbranch";
    if (branch && seen.contains(other)) {
      return ErrorAt(c.pos, "inbranch and notinbranch exclude each other",
                     seen.at(other));
    }
  }
  return CheckSimdVariables(simd);
}

absl::Status CheckCounts(const TraitSelector& t) {
  const SelectorInfo& info = GetSelectorInfo(t.id);
  size_t count = PropertyCount(t);
  if (info.property_required && count == 0) {
    return ErrorAt(t.pos, absl::StrCat(info.name, " requires ",
                                       info.kind == PropertyKind::kExpression
                                           ? "an expression"
                                           : "at least one property"));
  }
  if (info.kind == PropertyKind::kExpression && count > 1) {
    return ErrorAt(
        t.expressions[1].pos(),
        absl::StrCat(info.name, " takes exactly one expression, got ", count));
  }
  return absl::OkStatus();
}

absl::Status CheckSelector(Directive directive, const TraitSet& set,
                           TraitSelector& t) {
  CTXSEL_RETURN_IF_ERROR(CheckScore(set.id, t));
  CTXSEL_RETURN_IF_ERROR(CheckCounts(t));
  CTXSEL_RETURN_IF_ERROR(CheckNames(t));
  if (t.id == SelectorId::kDeviceKind ||
      t.id == SelectorId::kTargetDeviceKind) {
    CTXSEL_RETURN_IF_ERROR(CheckKind(set, t));
  }
  if (t.id == SelectorId::kConstructSimd) return CheckSimd(directive, t);
  return absl::OkStatus();
}

absl::Status CheckSet(Directive directive, TraitSet& set) {
  // Requirements with scores of their own are several requires selectors
  // (parser.cc); a property still appears once among them all.
  absl::flat_hash_map<SelectorId, Pos> seen;
  absl::flat_hash_map<std::string, Pos> requirements;
  for (TraitSelector& t : set.selectors) {
    if (auto [it, fresh] = seen.emplace(t.id, t.pos);
        !fresh && !t.property_spelling) {
      return ErrorAt(
          t.pos,
          absl::StrCat("trait selector '", SelName(t.id),
                       "' given twice in the ", SetName(set.id), " trait set"),
          it->second);
    }
    if (t.id != SelectorId::kImplRequires) continue;
    for (const NameProperty& p : t.names) {
      if (auto [it, fresh] = requirements.emplace(p.name, p.pos); !fresh) {
        const bool later = Before(it->second, p.pos);
        return ErrorAt(
            later ? p.pos : it->second,
            absl::StrCat("property '", p.name, "' given twice in requires"),
            later ? it->second : p.pos);
      }
    }
  }
  for (TraitSelector& t : set.selectors) {
    CTXSEL_RETURN_IF_ERROR(CheckSelector(directive, set, t));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Validate(SelectorAst& ast) {
  absl::flat_hash_map<SetId, Pos> seen;
  for (TraitSet& set : ast.sets) {
    if (auto [it, fresh] = seen.emplace(set.id, set.pos); !fresh) {
      return ErrorAt(
          set.pos,
          absl::StrCat("trait set '", SetName(set.id), "' given twice"),
          it->second);
    }
  }
  for (TraitSet& set : ast.sets) {
    CTXSEL_RETURN_IF_ERROR(CheckSet(ast.directive, set));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::selector::internal
