#include "selector/canonical.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ctxsel::selector::internal {
namespace {

bool IsIdentifier(absl::string_view s) {
  if (s.empty()) return false;
  if (!absl::ascii_isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_') {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Linear variables grouped by step: step 1 first (written bare), then
// constant steps in increasing order, then uniform-variable steps by name.
std::vector<std::string> LinearTexts(
    std::vector<SimdProperties::Linear> linear) {
  auto key = [](const SimdProperties::Linear& l) {
    bool unit = l.step.uniform.empty() && l.step.constant == 1;
    return std::make_tuple(!unit, !l.step.uniform.empty(), l.step.constant,
                           l.step.uniform, l.variable);
  };
  std::sort(linear.begin(), linear.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::vector<std::string> out;
  for (size_t i = 0; i < linear.size();) {
    std::vector<absl::string_view> vars;
    size_t j = i;
    for (; j < linear.size() && linear[j].step == linear[i].step; ++j) {
      vars.push_back(linear[j].variable);
    }
    const LinearStep& step = linear[i].step;
    bool unit = step.uniform.empty() && step.constant == 1;
    out.push_back(absl::StrCat("linear(", absl::StrJoin(vars, ", "),
                               unit ? "" : absl::StrCat(":", step.ToString()),
                               ")"));
    i = j;
  }
  return out;
}

std::string SimdText(const SimdProperties& simd) {
  std::vector<std::string> parts;
  if (simd.simdlen > 0)
    parts.push_back(absl::StrCat("simdlen(", simd.simdlen, ")"));
  std::vector<SimdProperties::Aligned> aligned = simd.aligned;
  std::sort(aligned.begin(), aligned.end(), [](const auto& a, const auto& b) {
    return a.variable < b.variable;
  });
  for (const auto& a : aligned) {
    parts.push_back(
        a.alignment > 0
            ? absl::StrCat("aligned(", a.variable, ":", a.alignment, ")")
            : absl::StrCat("aligned(", a.variable, ")"));
  }
  for (std::string& l : LinearTexts(simd.linear)) parts.push_back(std::move(l));
  if (!simd.uniform.empty()) {
    std::vector<absl::string_view> uniform;
    for (const auto& u : simd.uniform) uniform.push_back(u.name);
    std::sort(uniform.begin(), uniform.end());
    parts.push_back(
        absl::StrCat("uniform(", absl::StrJoin(uniform, ", "), ")"));
  }
  if (simd.inbranch) parts.push_back("inbranch");
  if (simd.notinbranch) parts.push_back("notinbranch");
  return absl::StrJoin(parts, ", ");
}

std::string PropertiesText(const TraitSelector& t) {
  switch (GetSelectorInfo(t.id).kind) {
    case PropertyKind::kNone:
      return "";
    case PropertyKind::kSimdClauses:
      return SimdText(t.simd);
    case PropertyKind::kExpression: {
      std::vector<std::string> parts;
      for (const Expression& e : t.expressions) {
        if (t.id == SelectorId::kUserCondition && e.constant()) {
          parts.push_back(e.value() != 0 ? "true" : "false");
        } else {
          parts.push_back(e.text());
        }
      }
      return absl::StrJoin(parts, ", ");
    }
    default: {
      std::vector<std::string> names;
      for (const NameProperty& p : t.names) names.push_back(PropertyText(p));
      std::sort(names.begin(), names.end());
      return absl::StrJoin(names, ", ");
    }
  }
}

}  // namespace

std::string NameText(absl::string_view name, bool extension) {
  return extension || IsIdentifier(name) ? std::string(name)
                                         : absl::StrCat("\"", name, "\"");
}

std::string PropertyText(const NameProperty& p) {
  if (p.arguments.empty()) return NameText(p.name, p.extension);
  std::vector<absl::string_view> arguments;
  for (const NameProperty& a : p.arguments) arguments.push_back(a.name);
  return absl::StrCat(p.name, "(", absl::StrJoin(arguments, ", "), ")");
}

std::string SelectorText(const TraitSelector& t) {
  std::string props = PropertiesText(t);
  std::string score = t.has_score ? absl::StrCat("score(", t.score, "): ") : "";
  std::string text(GetSelectorInfo(t.id).name);
  if (props.empty() && score.empty()) return text;
  return absl::StrCat(text, "(", score, props, ")");
}

namespace {

// Each selector's canonical text. Requirements with scores of their own
// are several requires selectors (parser.cc): then at most one of them is
// written `requires(...)` (the scored one with several properties, else the
// unscored one), and every other requirement in its own 5.0 spelling,
// `atomic_default_mem_order(score(3): seq_cst)` or `unified_address`, so
// that the text parses back to the same selectors.
std::vector<std::string> CanonicalSelectorTexts(const TraitSet& set) {
  std::vector<std::string> texts;
  int requires_count = 0;
  const TraitSelector* written_out = nullptr;
  for (const TraitSelector& t : set.selectors) {
    if (t.id != SelectorId::kImplRequires) continue;
    ++requires_count;
    if (t.has_score && t.names.size() > 1) written_out = &t;
  }
  if (written_out == nullptr) {
    for (const TraitSelector& t : set.selectors) {
      if (t.id == SelectorId::kImplRequires && !t.has_score) written_out = &t;
    }
  }
  for (const TraitSelector& t : set.selectors) {
    if (t.id != SelectorId::kImplRequires || requires_count == 1 ||
        &t == written_out) {
      texts.push_back(SelectorText(t));
      continue;
    }
    std::vector<std::string> spellings;
    for (const NameProperty& p : t.names) {
      if (!t.has_score) {
        spellings.push_back(PropertyText(p));
        continue;
      }
      std::vector<absl::string_view> arguments;
      for (const NameProperty& a : p.arguments) arguments.push_back(a.name);
      spellings.push_back(absl::StrCat(p.name, "(score(", t.score,
                                       "):", arguments.empty() ? "" : " ",
                                       absl::StrJoin(arguments, ", "), ")"));
    }
    std::sort(spellings.begin(), spellings.end());
    texts.push_back(absl::StrJoin(spellings, ", "));
  }
  return texts;
}

}  // namespace

void Finalize(SelectorAst& ast) {
  std::stable_sort(
      ast.sets.begin(), ast.sets.end(),
      [](const TraitSet& a, const TraitSet& b) { return a.id < b.id; });
  std::vector<std::string> sets;
  ast.dynamic = false;
  ast.has_target_device = ast.FindSet(SetId::kTargetDevice) != nullptr;
  for (TraitSet& set : ast.sets) {
    std::vector<std::string> texts = CanonicalSelectorTexts(set);
    if (set.id != SetId::kConstruct) {
      // By selector; several requires selectors: `requires(...)` first,
      // then the spellings by text.
      std::vector<size_t> order(set.selectors.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      auto key = [&](size_t i) {
        return std::make_tuple(set.selectors[i].id,
                               !absl::StartsWith(texts[i], "requires("),
                               absl::string_view(texts[i]));
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return key(a) < key(b); });
      std::vector<TraitSelector> selectors;
      std::vector<std::string> sorted_texts;
      for (size_t i : order) {
        selectors.push_back(std::move(set.selectors[i]));
        sorted_texts.push_back(std::move(texts[i]));
      }
      set.selectors = std::move(selectors);
      texts = std::move(sorted_texts);
    }
    if (GetSetInfo(set.id).dynamic) ast.dynamic = true;
    std::vector<std::string> selectors;
    for (size_t i = 0; i < set.selectors.size(); ++i) {
      const TraitSelector& t = set.selectors[i];
      for (const Expression& e : t.expressions) {
        if (t.id == SelectorId::kUserCondition && !e.constant()) {
          ast.dynamic = true;
        }
      }
      selectors.push_back(std::move(texts[i]));
    }
    sets.push_back(absl::StrCat(GetSetInfo(set.id).name, "={",
                                absl::StrJoin(selectors, ", "), "}"));
  }
  ast.canonical = absl::StrJoin(sets, ", ");
}

}  // namespace ctxsel::selector::internal
