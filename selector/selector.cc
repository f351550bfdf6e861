// The Selector front door: parse = syntax + validation + canonical form.
#include "selector/selector.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "selector/ast.h"
#include "selector/canonical.h"
#include "selector/compiled.h"
#include "selector/matcher.h"
#include "selector/parser.h"
#include "selector/scorer.h"
#include "selector/selector_error.h"
#include "selector/validator.h"

namespace ctxsel::selector {
namespace {

using internal::SelectorAst;

constexpr std::pair<Directive, absl::string_view> kDirectives[] = {
    {Directive::kDeclareVariant, "declare_variant"},
    {Directive::kBeginDeclareVariant, "begin_declare_variant"},
    {Directive::kMetadirective, "metadirective"},
};

absl::StatusOr<Selector> Build(SelectorAst ast) {
  CTXSEL_RETURN_IF_ERROR(internal::Validate(ast));
  internal::Finalize(ast);
  ast.subset_items = internal::ItemsOf(ast);
  // Made where the tree rests: the dynamic part points into it.
  auto built = std::make_shared<SelectorAst>(std::move(ast));
  built->dynamic_part = internal::DynamicPartOf(*built);
  built->requirements = internal::CompileRequirements(*built);
  return Selector(std::move(built));
}

// Renumbers every position in `t` by `by` texts (TextPosition::text).
void ShiftText(internal::TraitSelector& t, int by) {
  t.pos.text += by;
  t.score_pos.text += by;
  if (t.score_expr) t.score_expr->ShiftText(by);
  for (internal::NameProperty& p : t.names) {
    p.pos.text += by;
    for (internal::NameProperty& a : p.arguments) a.pos.text += by;
  }
  for (internal::Expression& e : t.expressions) e.ShiftText(by);
  for (internal::NameProperty& c : t.simd.clauses) c.pos.text += by;
  for (auto& a : t.simd.aligned) a.pos.text += by;
  for (auto& l : t.simd.linear) {
    l.pos.text += by;
    l.step_pos.text += by;
  }
  for (auto& u : t.simd.uniform) u.pos.text += by;
}

}  // namespace

absl::StatusOr<Directive> ParseDirective(absl::string_view name) {
  for (const auto& [directive, text] : kDirectives) {
    if (text == name) return directive;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown directive '", name,
                   "' (expected declare_variant, begin_declare_variant or "
                   "metadirective)"));
}

absl::string_view DirectiveName(Directive directive) {
  for (const auto& [d, text] : kDirectives) {
    if (d == directive) return text;
  }
  return "";
}

absl::StatusOr<Selector> Selector::Parse(absl::string_view text,
                                         Directive directive) {
  CTXSEL_ASSIGN_OR_RETURN(SelectorAst ast,
                          internal::ParseSyntax(text, directive));
  return Build(std::move(ast));
}

bool Selector::is_dynamic() const { return ast_->dynamic; }
bool Selector::has_target_device() const { return ast_->has_target_device; }
std::string Selector::ToString() const { return ast_->canonical; }
Directive Selector::directive() const { return ast_->directive; }

std::vector<std::string> Selector::variables() const {
  NameSet names;
  for (const internal::TraitSet& set : ast_->sets) {
    for (const internal::TraitSelector& selector : set.selectors) {
      if (selector.score_expr) selector.score_expr->AddVariables(names);
      for (const internal::Expression& e : selector.expressions) {
        e.AddVariables(names);
      }
    }
  }
  std::vector<std::string> sorted(names.begin(), names.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

std::vector<std::pair<std::string, TextPosition>> Selector::trait_sets() const {
  std::vector<std::pair<std::string, TextPosition>> sets;
  sets.reserve(ast_->sets.size());
  for (const internal::TraitSet& set : ast_->sets) {
    sets.emplace_back(std::string(internal::GetSetInfo(set.id).name), set.pos);
  }
  return sets;
}

absl::StatusOr<Selector> EffectiveSelector(const Selector& inner,
                                           const Selector& outer) {
  SelectorAst merged = inner.ast();
  // The outer selector's positions refer to its own texts, numbered after
  // the inner selector's.
  const int shift = merged.text_count;
  merged.text_count += outer.ast().text_count;
  for (internal::TraitSet outer_set : outer.ast().sets) {
    outer_set.pos.text += shift;
    for (internal::TraitSelector& t : outer_set.selectors) ShiftText(t, shift);
    internal::TraitSet* target = nullptr;
    for (internal::TraitSet& s : merged.sets) {
      if (s.id == outer_set.id) target = &s;
    }
    if (target == nullptr) {
      merged.sets.push_back(std::move(outer_set));
      continue;
    }
    std::vector<internal::TraitSelector> appended;
    for (internal::TraitSelector& t : outer_set.selectors) {
      bool equivalent = false;
      for (const internal::TraitSelector& mine : target->selectors) {
        if (internal::SelectorText(mine) == internal::SelectorText(t)) {
          equivalent = true;
        }
      }
      if (!equivalent) appended.push_back(std::move(t));
    }
    target->selectors.insert(target->selectors.end(), appended.begin(),
                             appended.end());
  }
  absl::StatusOr<Selector> result = Build(std::move(merged));
  if (result.ok()) return result;
  std::optional<SelectorError> error = GetSelectorError(result.status());
  if (!error) return result;
  error->context =
      absl::StrCat("in the effective selector of '", inner.ToString(),
                   "' nested in '", outer.ToString(), "'");
  return MakeSelectorError(*error);
}

std::string LinearStep::ToString() const {
  return uniform.empty() ? absl::StrCat(constant) : uniform;
}

void AddConstruct(Context& context, absl::string_view name) {
  ConstructTrait trait;
  trait.name = std::string(name);
  context.construct.push_back(std::move(trait));
}

}  // namespace ctxsel::selector
