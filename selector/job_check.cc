#include "selector/job_check.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "selector/device_variables.h"
#include "selector/suggest.h"
#include "selector/traits.h"

namespace ctxsel::selector {
namespace {

using internal::DidYouMean;
using internal::SelectorId;

// OK when `name` is one of `known`; otherwise an error with a suggestion.
absl::Status CheckClosedName(const std::vector<absl::string_view>& known,
                             absl::string_view what, absl::string_view name) {
  if (std::find(known.begin(), known.end(), name) != known.end()) {
    return absl::OkStatus();
  }
  std::string hint = DidYouMean(name, known);
  if (hint.empty())
    hint = absl::StrCat(" (one of ", absl::StrJoin(known, ", "), ")");
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not ", what, hint));
}

}  // namespace

absl::Status CheckConstructName(absl::string_view name) {
  // Built once: every Select checks every construct name of its job.
  static const auto* const kKnown =
      new std::vector<absl::string_view>(internal::JobConstructNames());
  const std::vector<absl::string_view>& known = *kKnown;
  if (std::find(known.begin(), known.end(), name) != known.end()) {
    return absl::OkStatus();
  }
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "empty construct name (one of ", absl::StrJoin(known, ", "), ")"));
  }
  std::string hint = DidYouMean(absl::StripAsciiWhitespace(name), known);
  if (hint.empty()) {
    hint = absl::StrCat(" (one of ", absl::StrJoin(known, ", "), ")");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not an OpenMP construct", hint));
}

absl::Status CheckRequirement(absl::string_view name) {
  return CheckClosedName(internal::KnownProperties(SelectorId::kImplRequires),
                         "a requires clause", name);
}

absl::Status CheckMemoryOrder(absl::string_view name) {
  return CheckClosedName(
      internal::PropertyArguments(SelectorId::kImplRequires,
                                  "atomic_default_mem_order"),
      "a memory order", name);
}

absl::Status CheckDeviceKind(absl::string_view name) {
  return CheckClosedName(internal::KnownProperties(SelectorId::kDeviceKind),
                         "a device kind", name);
}

absl::Status CheckVariablesGiven(const std::vector<std::string>& referenced,
                                 const Variables& given) {
  std::vector<std::string> missing;
  for (const std::string& name : referenced) {
    // The implementation gives those, per candidate device.
    if (given.contains(name) || IsDeviceVariable(name)) continue;
    std::string entry = name;
    for (const auto& [other, value] : given) {
      if (absl::EqualsIgnoreCase(other, name)) {
        absl::StrAppend(&entry, " ('", other,
                        "' was given: variable names are case-sensitive)");
        break;
      }
    }
    missing.push_back(std::move(entry));
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("missing ", absl::StrJoin(missing, ", "),
                   " (the kernel's selectors read ",
                   missing.size() == 1 ? "it" : "them", ")"));
}

}  // namespace ctxsel::selector
