// select_answer.h: a SelectResponse read rank by rank, for `select` and
// `run`: each rank's placement, claim and launch environment, the one-line
// note on a fallback the job did not rule out, and whether the answer keeps
// the job's terms (a server that predates them ignores them).
//
//   for (int rank = 0; rank < RankCount(answer); ++rank) {
//     const v1::Claim& claim = RankClaim(answer, rank);
//     for (const auto& [name, value] : RankEnv(request, answer, rank)) ...
//   }
//   if (std::string note = FallbackNote(request, answer); !note.empty()) ...
#ifndef CTXSEL_CLIENT_CLI_SELECT_ANSWER_H_
#define CTXSEL_CLIENT_CLI_SELECT_ANSWER_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "launch/launch_env.h"

namespace ctxsel::cli {

// Environment variables as (name, value), in the order they are set.
using EnvVars = launch::LaunchEnvironment;

// How many ranks `answer` places: ranks_size(), or 1 from a server that
// sends no ranks.
int RankCount(const v1::SelectResponse& answer);

// Rank `rank`'s placement and claim (answer.placement() and answer.claim()
// from a server that sends no ranks).
const v1::PlacementChoice& RankPlacement(const v1::SelectResponse& answer,
                                         int rank);
const v1::Claim& RankClaim(const v1::SelectResponse& answer, int rank);

// Rank `rank`'s launch environment: the server's
// (SelectResponse.ranks[rank].environment); from a server that sends no
// ranks, launch::LaunchEnv of the placement with CTXSEL_CLAIM when there is
// a claim.
EnvVars RankEnv(const v1::SelectRequest& request,
                const v1::SelectResponse& answer, int rank);

// One line for stderr when a rank of `answer` (only `rank` when given)
// landed where the job did not ask for: the kernel's base function without
// Job.require_variant, or a host CPU without Job.required_kind; it names the
// flag that fails instead. "" when none did.
std::string FallbackNote(const v1::SelectRequest& request,
                         const v1::SelectResponse& answer,
                         std::optional<int> rank = std::nullopt);

// FAILED_PRECONDITION saying how `answer` breaks the terms of `request`'s
// job: fewer or more than Job.count ranks, a device outside
// Job.allowed_devices (by id or UUID), without Job.required_kind, or the base
// function despite Job.require_variant. OK when it keeps them.
absl::Status CheckTerms(const v1::SelectRequest& request,
                        const v1::SelectResponse& answer);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_SELECT_ANSWER_H_
