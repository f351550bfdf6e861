#include "server/model/policy.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ctxsel::server {
namespace {

struct PolicyInfo {
  Policy policy;
  absl::string_view name;
  absl::string_view meaning;
};

constexpr PolicyInfo kPolicies[] = {
#define POLICY(Enumerator, Name, ProtoValue, Meaning) \
  {Policy::Enumerator, Name, Meaning},
#include "base/policy.def"
};

const PolicyInfo& Info(Policy policy) {
  for (const PolicyInfo& info : kPolicies) {
    if (info.policy == policy) return info;
  }
  return kPolicies[0];  // unreachable for valid enumerators
}

}  // namespace

absl::string_view PolicyName(Policy policy) { return Info(policy).name; }

absl::string_view PolicyMeaning(Policy policy) { return Info(policy).meaning; }

const std::vector<Policy>& AllPolicies() {
  static const std::vector<Policy>* const all = [] {
    auto* v = new std::vector<Policy>;
    for (const PolicyInfo& info : kPolicies) v->push_back(info.policy);
    return v;
  }();
  return *all;
}

}  // namespace ctxsel::server
