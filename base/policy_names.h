// policy_names.h: the placement policies' names ("least_loaded", "spread",
// "pack") and their ctxsel.v1.Policy values, both from the one table
// base/policy.def: the only parser of a policy name (ctxsel-cli --policy)
// and its printer. The server reads the same table for its enum
// (server/model/policy.h).
//
//   absl::StatusOr<v1::Policy> p = ParsePolicyName("spread");  // POLICY_SPREAD
//   absl::string_view name = PolicyNameOf(v1::POLICY_PACK);     // "pack"
#ifndef CTXSEL_BASE_POLICY_NAMES_H_
#define CTXSEL_BASE_POLICY_NAMES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel {

// The policy named `name`; INVALID_ARGUMENT "unknown policy 'x' (known:
// least_loaded, spread, pack)" otherwise.
absl::StatusOr<v1::Policy> ParsePolicyName(absl::string_view name);

// The name of `policy`; empty for POLICY_UNSPECIFIED and unknown values.
absl::string_view PolicyNameOf(v1::Policy policy);

// Every name, in table order.
const std::vector<absl::string_view>& PolicyNames();

}  // namespace ctxsel

#endif  // CTXSEL_BASE_POLICY_NAMES_H_
