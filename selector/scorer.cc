#include "selector/scorer.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "selector/canonical.h"
#include "selector/compiled.h"

namespace ctxsel::selector::internal {
namespace {

bool IsOnlyAny(const TraitSelector& t) {
  return (t.id == SelectorId::kDeviceKind ||
          t.id == SelectorId::kTargetDeviceKind) &&
         t.names.size() == 1 && t.names[0].name == "any";
}

std::string TermName(const TraitSelector& t) {
  const SelectorInfo& info = GetSelectorInfo(t.id);
  return absl::StrCat(GetSetInfo(info.set).name, ".", info.name);
}

// Whether a kind selector, or one kind property, adds 2^l.
bool KindSelectorScored(const TraitSelector& t, const ResolveOptions& options) {
  return options.kind_any_scored || !IsOnlyAny(t);
}
bool KindPropertyScored(const NameProperty& k, const ResolveOptions& options) {
  return options.kind_any_scored || k.name != "any";
}

// Adds `value`; the term's name (`name()`) is built only for the terms
// list or an overflow message.
template <typename Name>
absl::Status AddTerm(ScoreSum& out, bool with_terms, const Name& name,
                     uint64_t value) {
  if (__builtin_add_overflow(out.sum, value, &out.sum)) {
    return absl::InvalidArgumentError(
        absl::StrCat("score overflows 64 bits at ", name(), " (", value, ")"));
  }
  if (with_terms) out.terms.push_back({name(), value});
  return absl::OkStatus();
}

void SortUnique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// One item per clause and variable, in canonical spelling.
std::vector<std::string> SimdClauseItems(const SimdProperties& simd) {
  std::vector<std::string> out;
  if (simd.simdlen > 0)
    out.push_back(absl::StrCat("simdlen(", simd.simdlen, ")"));
  for (const auto& a : simd.aligned) {
    out.push_back(a.alignment > 0 ? absl::StrCat("aligned(", a.variable, ":",
                                                 a.alignment, ")")
                                  : absl::StrCat("aligned(", a.variable, ")"));
  }
  for (const auto& l : simd.linear) {
    out.push_back(
        absl::StrCat("linear(", l.variable, ":", l.step.ToString(), ")"));
  }
  for (const auto& u : simd.uniform) {
    out.push_back(absl::StrCat("uniform(", u.name, ")"));
  }
  if (simd.inbranch) out.push_back("inbranch");
  if (simd.notinbranch) out.push_back("notinbranch");
  SortUnique(out);
  return out;
}

size_t Size(const SubsetItems& s) {
  size_t n = s.items.size() + s.constructs.size();
  for (const SubsetItems::Construct& c : s.constructs) n += c.clauses.size();
  return n;
}

template <typename T>
bool Includes(const std::vector<T>& big, const std::vector<T>& small) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());
}

}  // namespace

absl::StatusOr<ScoreSum> SumScore(const SelectorAst& ast,
                                  absl::Span<const int> construct_positions,
                                  int l, bool with_terms,
                                  const ResolveOptions& options) {
  ScoreSum out;
  const int context_l = l;
  if (options.l_from_selector) l = static_cast<int>(construct_positions.size());
  for (const TraitSet& set : ast.sets) {
    for (size_t i = 0; i < set.selectors.size(); ++i) {
      const TraitSelector& t = set.selectors[i];
      auto name = [&t] { return TermName(t); };
      absl::Status s;
      switch (GetSelectorInfo(t.id).weight) {
        case Weight::kConstructPosition: {
          int p = construct_positions.at(i);
          s = AddTerm(
              out, with_terms,
              [&] { return absl::StrCat(TermName(t), "@", p); },
              ConstructValue(p, context_l, options));
          break;
        }
        case Weight::kKind:
          if (options.kind_per_property) {
            for (const NameProperty& k : t.names) {
              if (!KindPropertyScored(k, options)) continue;
              s.Update(AddTerm(
                  out, with_terms,
                  [&] { return absl::StrCat(TermName(t), "(", k.name, ")"); },
                  Pow2(l)));
            }
          } else if (KindSelectorScored(t, options)) {
            s = AddTerm(out, with_terms, name, Pow2(l));
          }
          break;
        case Weight::kArch:
          s = AddTerm(out, with_terms, name, Pow2(l + 1));
          break;
        case Weight::kIsa:
          s = AddTerm(out, with_terms, name, Pow2(l + 2));
          break;
        case Weight::kZero:
          break;
      }
      if (!s.ok()) return s;
      if (t.has_score) {
        s = AddTerm(
            out, with_terms,
            [&t] { return absl::StrCat(TermName(t), ".score"); },
            static_cast<uint64_t>(t.score));
        if (!s.ok()) return s;
      }
    }
  }
  return out;
}

bool CountWeights(const SelectorAst& ast, StaticRequirements& req) {
  ResolveOptions any_scored;
  any_scored.kind_any_scored = true;
  const ResolveOptions texts;
  for (const TraitSet& set : ast.sets) {
    for (const TraitSelector& t : set.selectors) {
      switch (GetSelectorInfo(t.id).weight) {
        case Weight::kKind:
          req.kind_selectors += KindSelectorScored(t, any_scored);
          req.kind_selectors_scored += KindSelectorScored(t, texts);
          for (const NameProperty& k : t.names) {
            req.kind_properties += KindPropertyScored(k, any_scored);
            req.kind_properties_scored += KindPropertyScored(k, texts);
          }
          break;
        case Weight::kArch:
          ++req.arch;
          break;
        case Weight::kIsa:
          ++req.isa;
          break;
        case Weight::kConstructPosition:
        case Weight::kZero:
          break;
      }
      if (t.has_score && __builtin_add_overflow(req.explicit_scores,
                                                static_cast<uint64_t>(t.score),
                                                &req.explicit_scores)) {
        return false;
      }
    }
  }
  return true;
}

SubsetItems ItemsOf(const SelectorAst& ast, bool kind_any_scored) {
  SubsetItems out;
  for (const TraitSet& set : ast.sets) {
    for (const TraitSelector& t : set.selectors) {
      if (set.id == SetId::kConstruct) {
        out.constructs.push_back({t.id, SimdClauseItems(t.simd)});
        continue;
      }
      std::string prefix = TermName(t);
      std::string score = t.has_score ? absl::StrCat("#", t.score) : "";
      for (const NameProperty& p : t.names) {
        if (!kind_any_scored && IsOnlyAny(t)) continue;
        out.items.push_back(
            absl::StrCat(prefix, "(", PropertyText(p), ")", score));
      }
      for (const Expression& e : t.expressions) {
        std::string value = e.constant() && t.id == SelectorId::kUserCondition
                                ? (e.value() != 0 ? "true" : "false")
                                : e.text();
        out.items.push_back(absl::StrCat(prefix, "(", value, ")", score));
      }
    }
  }
  SortUnique(out.items);
  InternSubsetItems(out);
  return out;
}

bool IsStrictSubset(const SubsetItems& a, const SubsetItems& b) {
  // By ids, or by the strings (sorted and unique as well) where a name had
  // no id.
  const bool by_ids = a.by_ids && b.by_ids;
  if (Size(a) >= Size(b) || !(by_ids ? Includes(b.item_ids, a.item_ids)
                                     : Includes(b.items, a.items))) {
    return false;
  }
  auto clauses_include = [&](size_t j, size_t i) {
    return by_ids ? Includes(b.clause_ids[j], a.clause_ids[i])
                  : Includes(b.constructs[j].clauses, a.constructs[i].clauses);
  };
  // Earliest matches first: a greedy embedding exists iff any does.
  size_t j = 0;
  for (size_t i = 0; i < a.constructs.size(); ++i) {
    while (
        j < b.constructs.size() &&
        (b.constructs[j].id != a.constructs[i].id || !clauses_include(j, i))) {
      ++j;
    }
    if (j == b.constructs.size()) return false;
    ++j;
  }
  return true;
}

}  // namespace ctxsel::selector::internal
