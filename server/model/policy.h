// policy.h: the placement policies (one enumerator per line of
// base/policy.def) and their names. Names are parsed in one place,
// base/policy_names.h (ctxsel-cli); the server receives ctxsel.v1.Policy.
//
//   absl::string_view name = PolicyName(Policy::kPack);  // "pack"
#ifndef CTXSEL_SERVER_MODEL_POLICY_H_
#define CTXSEL_SERVER_MODEL_POLICY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel::server {

// How to choose among the live devices of the winning device classes. One
// enumerator per line of base/policy.def, which also gives each
// its name, meaning and ctxsel.v1 value.
enum class Policy {
#define POLICY(Enumerator, Name, ProtoValue, Meaning) Enumerator,
#include "base/policy.def"
};

// The policy of a job that names none.
inline constexpr Policy kDefaultPolicy = Policy::kLeastLoaded;

// "least_loaded", "spread" or "pack".
absl::string_view PolicyName(Policy policy);

// One line on what the policy picks, for help texts and docs.
absl::string_view PolicyMeaning(Policy policy);

// Every policy, in table order.
const std::vector<Policy>& AllPolicies();

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_POLICY_H_
