#include "base/policy_names.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ctxsel {
namespace {

struct PolicyName {
  absl::string_view name;
  v1::Policy value;
};

constexpr PolicyName kPolicies[] = {
#define POLICY(Enumerator, Name, ProtoValue, Meaning) {Name, v1::ProtoValue},
#include "base/policy.def"
};

}  // namespace

absl::StatusOr<v1::Policy> ParsePolicyName(absl::string_view name) {
  for (const PolicyName& p : kPolicies) {
    if (p.name == name) return p.value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown policy '", name,
                   "' (known: ", absl::StrJoin(PolicyNames(), ", "), ")"));
}

absl::string_view PolicyNameOf(v1::Policy policy) {
  for (const PolicyName& p : kPolicies) {
    if (p.value == policy) return p.name;
  }
  return {};
}

const std::vector<absl::string_view>& PolicyNames() {
  static const auto* const names = [] {
    auto* v = new std::vector<absl::string_view>;
    for (const PolicyName& p : kPolicies) v->push_back(p.name);
    return v;
  }();
  return *names;
}

}  // namespace ctxsel
