#include "client/cli/eval_kernel.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ctxsel::cli {
namespace {

bool BelongsTo(const KernelVariant& variant, const std::string& kernel) {
  return variant.kernel.empty() || variant.kernel == kernel;
}

}  // namespace

absl::StatusOr<std::string> ChooseKernel(
    const std::string& requested, const std::vector<KernelVariant>& variants) {
  std::set<std::string> named;
  for (const KernelVariant& v : variants) {
    if (!v.kernel.empty()) named.insert(v.kernel);
  }
  if (requested.empty()) {
    if (named.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("the variants belong to several kernels (",
                       absl::StrJoin(named, ", "),
                       "): choose one with --kernel or \"kernel\""));
    }
    return named.empty() ? "" : *named.begin();
  }
  if (!variants.empty() && std::none_of(variants.begin(), variants.end(),
                                        [&](const KernelVariant& v) {
                                          return BelongsTo(v, requested);
                                        })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel '", requested, "' has no variants (the variants are for ",
        absl::StrJoin(named, ", "), ")"));
  }
  return requested;
}

std::vector<selector::Candidate> CandidatesOf(
    const std::string& kernel, std::vector<KernelVariant> variants) {
  std::vector<selector::Candidate> out;
  for (KernelVariant& v : variants) {
    if (BelongsTo(v, kernel)) out.push_back(std::move(v.candidate));
  }
  return out;
}

}  // namespace ctxsel::cli
