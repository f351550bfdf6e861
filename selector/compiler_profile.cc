#include "selector/compiler_profile.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ctxsel::selector {
namespace {

struct ProfileRow {
  CompilerProfile profile;
  absl::string_view name;
  TieBreak declare_variant_ties;
  absl::string_view summary;
};

constexpr ProfileRow kProfiles[] = {
#define CTXSEL_COMPILER_PROFILE(e, name, ties, summary) \
  {CompilerProfile::e, name, TieBreak::ties, summary},
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
  return options;
}

}  // namespace ctxsel::selector
