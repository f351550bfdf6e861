#include "selector/compiler_profile.h"

#include <initializer_list>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "selector/ast.h"

namespace ctxsel::selector {
namespace {

enum Deviation {
#define CTXSEL_DEVIATION(e, what) e,
#include "selector/compiler_profiles.def"
};

constexpr unsigned Bits(std::initializer_list<Deviation> deviations) {
  unsigned bits = 0;
  for (Deviation d : deviations) bits |= 1u << d;
  return bits;
}

struct ProfileRow {
  CompilerProfile profile;
  absl::string_view name;
  absl::string_view summary;
  unsigned deviations;
  bool Has(Deviation d) const { return (deviations >> d) & 1u; }
};

constexpr ProfileRow kProfiles[] = {
#define CTXSEL_COMPILER_PROFILE(e, name, summary, ...) \
  {CompilerProfile::e, name, summary, Bits({__VA_ARGS__})},
#include "selector/compiler_profiles.def"
};

const ProfileRow& RowOf(CompilerProfile profile) {
  return kProfiles[static_cast<int>(profile)];
}

}  // namespace

absl::string_view CompilerProfileName(CompilerProfile profile) {
  return RowOf(profile).name;
}

absl::string_view CompilerProfileSummary(CompilerProfile profile) {
  return RowOf(profile).summary;
}

absl::StatusOr<CompilerProfile> CompilerProfileFromName(
    absl::string_view name) {
  for (const ProfileRow& row : kProfiles) {
    if (row.name == name) return row.profile;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown compiler '", name,
                                                 "' (expected one of ",
                                                 CompilerProfileNames(), ")"));
}

std::string CompilerProfileNames() {
  std::vector<absl::string_view> names;
  for (const ProfileRow& row : kProfiles) names.push_back(row.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<TieChoice> TieChoiceFromName(absl::string_view name) {
  if (name.empty()) return TieChoice::kCompilerDefault;
  if (name == "first") return TieChoice::kFirstDeclared;
  if (name == "last") return TieChoice::kLastDeclared;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tie rule '", name,
                   "' (expected first or last; empty: the compiler's)"));
}

absl::string_view TieChoiceName(TieChoice ties) {
  switch (ties) {
    case TieChoice::kFirstDeclared:
      return "first";
    case TieChoice::kLastDeclared:
      return "last";
    case TieChoice::kCompilerDefault:
      break;
  }
  return "";
}

ResolveOptions ResolveOptionsFor(CompilerProfile profile, Directive directive,
                                 TieChoice ties) {
  const ProfileRow& row = RowOf(profile);
  ResolveOptions options;
  if (directive == Directive::kMetadirective) {
    options.empty_construct_set = row.Has(kMetadirectiveEmptyConstructSet);
  } else if (ties == TieChoice::kCompilerDefault) {
    options.ties = row.Has(kTiesLastDeclared) ? TieBreak::kLastDeclared
                                              : TieBreak::kFirstDeclared;
  } else {
    options.ties = ties == TieChoice::kLastDeclared ? TieBreak::kLastDeclared
                                                    : TieBreak::kFirstDeclared;
  }
  options.kind_any_scored = row.Has(kKindAnyScored);
  // Counted from the innermost, the highest-valued positions are the
  // lowest ones.
  options.positions_from_innermost = row.Has(kPositionsFromInnermost);
  options.lowest_embedding =
      row.Has(kLowestEmbedding) || row.Has(kPositionsFromInnermost);
  options.l_from_selector = row.Has(kLFromSelector);
  options.kind_per_property = row.Has(kKindPerProperty);
  options.simd_variant_calls_base = row.Has(kSimdVariantCallsBase);
  options.keep_constructs_outside_target =
      row.Has(kKeepConstructsOutsideTarget);
  return options;
}

absl::Status CheckForCompiler(CompilerProfile profile,
                              const Selector& selector) {
  const ProfileRow& row = RowOf(profile);
  if (row.Has(kMetadirectiveIgnored) &&
      selector.directive() == Directive::kMetadirective) {
    return absl::InvalidArgumentError(
        absl::StrCat(row.name,
                     " ignores metadirectives: the statement runs without a "
                     "directive"));
  }
  if (!row.Has(kConditionScoreRefused)) return absl::OkStatus();
  const internal::SelectorAst& ast = selector.ast();
  const internal::TraitSet* user = ast.FindSet(internal::SetId::kUser);
  if (user == nullptr) return absl::OkStatus();
  for (const internal::TraitSelector& t : user->selectors) {
    if (t.id == internal::SelectorId::kUserCondition && t.has_score) {
      return absl::InvalidArgumentError(absl::StrCat(
          t.score_pos.ToString(), ": ", row.name,
          " refuses a score in condition(...): the program does not build"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::selector
