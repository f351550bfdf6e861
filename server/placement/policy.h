// policy.h: names of the placement policies (table in policy.def).
//
//   absl::StatusOr<Policy> p = ParsePolicy("spread");
//   absl::string_view name = PolicyName(Policy::kPack);  // "pack"
#ifndef CTXSEL_SERVER_PLACEMENT_POLICY_H_
#define CTXSEL_SERVER_PLACEMENT_POLICY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/model.h"

namespace ctxsel::server::placement {

// "least_loaded", "spread" or "pack".
absl::string_view PolicyName(Policy policy);

// One line on what the policy picks, for help texts and docs.
absl::string_view PolicyMeaning(Policy policy);

// The policy named `name`; InvalidArgumentError naming the known policies
// otherwise.
absl::StatusOr<Policy> ParsePolicy(absl::string_view name);

// Every policy, in table order.
const std::vector<Policy>& AllPolicies();

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_POLICY_H_
