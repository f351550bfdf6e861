// select_command.h: what `select` shares with `run` (run_command.cc): the
// job and claim flags, the launch environment of a choice, and a claiming
// Select that waits for a device to free up.
//
//   absl::StatusOr<v1::SelectRequest> request = SelectRequestFromFlags();
//   auto answer = SelectWaiting(*client, *request, absl::Minutes(1), sleep);
//   for (const auto& [name, value] : LaunchEnv(*request, *answer)) ...
#ifndef CTXSEL_CLIENT_CLI_SELECT_COMMAND_H_
#define CTXSEL_CLIENT_CLI_SELECT_COMMAND_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "launch/launch_env.h"
#include "ctxsel/v1/ctxsel.pb.h"

ABSL_DECLARE_FLAG(absl::Duration, claim);
ABSL_DECLARE_FLAG(absl::Duration, wait);

namespace ctxsel::cli {

// Environment variables as (name, value), in the order they are set.
using EnvVars = launch::LaunchEnvironment;

// The job of the select/explain/run flags (--kernel, --construct, --var,
// --policy, --nodes or --here, --device_filter, ...); INVALID_ARGUMENT
// naming the flag. Without `read_variables`, --var is left to the caller
// (coverage reads it as ranges).
absl::StatusOr<v1::Job> JobFromFlags(bool read_variables = true);

// JobFromFlags() plus, with --claim=DURATION, a claim for --holder
// (default DefaultHolder()).
absl::StatusOr<v1::SelectRequest> SelectRequestFromFlags();

// "user@host:pid": who holds a claim this process makes.
std::string DefaultHolder();

// launch::LaunchEnv of the answer's placement (launch/launch_env.h), with
// CTXSEL_CLAIM (the claim id) when the answer holds a claim.
EnvVars LaunchEnv(const v1::SelectRequest& request,
                  const v1::SelectResponse& answer);

// Select; while the answer is RESOURCE_EXHAUSTED (every fitting device
// claimed) and `wait` has not passed, tries again with backoff (100ms
// doubling to 2s), sleeping through `sleep`, which returns false when the
// wait should stop (e.g. a signal). The last answer otherwise.
absl::StatusOr<v1::SelectResponse> SelectWaiting(
    client::CtxselClient& client, const v1::SelectRequest& request,
    absl::Duration wait,
    const std::function<bool(absl::Duration)>& sleep = [](absl::Duration d) {
      absl::SleepFor(d);
      return true;
    });

// The job flags (JobFromFlags) that select, explain and run share, for
// their usage lines (which are also the flags each takes).
#define CTXSEL_CLI_JOB_FLAGS                                             \
  "--kernel=K [--construct=C,...] [--var=NAME=INTEGER,...] "             \
  "[--policy=least_loaded|spread|pack] [--nodes=NODE,...] "              \
  "[--device_filter=SELECTOR] [--impl_vendor=V,...] [--requires=R,...] " \
  "[--top_k=N] [--here]"

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_SELECT_COMMAND_H_
