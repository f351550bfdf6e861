#include "selector/compiler_profile.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "selector/ast.h"

namespace ctxsel::selector {
namespace {

struct ProfileRow {
  CompilerProfile profile;
  absl::string_view name;
  TieBreak declare_variant_ties;
  bool kind_any_scored;
  bool condition_score_refused;
  absl::string_view summary;
};

constexpr ProfileRow kProfiles[] = {
#define CTXSEL_COMPILER_PROFILE(e, name, ties, kind_any, condition_score, \
                                summary)                                  \
  {CompilerProfile::e, name,   TieBreak::ties, kind_any,                  \
   condition_score,    summary},
#include "selector/compiler_profiles.def"
#undef CTXSEL_COMPILER_PROFILE
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

ResolveOptions ResolveOptionsFor(CompilerProfile profile, Directive directive) {
  ResolveOptions options;
  if (directive != Directive::kMetadirective) {
    options.ties = RowOf(profile).declare_variant_ties;
  }
  options.kind_any_scored = RowOf(profile).kind_any_scored;
  return options;
}

absl::Status CheckForCompiler(CompilerProfile profile,
                              const Selector& selector) {
  if (!RowOf(profile).condition_score_refused) return absl::OkStatus();
  const internal::SelectorAst& ast = selector.ast();
  const internal::TraitSet* user = ast.FindSet(internal::SetId::kUser);
  if (user == nullptr) return absl::OkStatus();
  for (const internal::TraitSelector& t : user->selectors) {
    if (t.id == internal::SelectorId::kUserCondition && t.has_score) {
      return absl::InvalidArgumentError(absl::StrCat(
          t.score_pos.ToString(), ": ", RowOf(profile).name,
          " refuses a score in condition(...): the program does not build"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::selector
