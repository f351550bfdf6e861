// select_command.h: what `select` shares with `run` (run_command.cc): the
// job and claim flags and a claiming Select that waits for devices to free
// up; select_answer.h reads its answer.
//
//   auto client = ConnectToServer();
//   absl::StatusOr<v1::SelectRequest> request =
//       SelectRequestFromFlags(client.get(), absl::ZeroDuration());
//   auto answer = SelectWaiting(*client, *request, absl::Minutes(1), sleep);
//   for (int rank = 0; rank < RankCount(*answer); ++rank) {
//     for (const auto& [name, value] : RankEnv(*request, *answer, rank)) ...
//   }
#ifndef CTXSEL_CLIENT_CLI_SELECT_COMMAND_H_
#define CTXSEL_CLIENT_CLI_SELECT_COMMAND_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cli/select_answer.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.pb.h"

ABSL_DECLARE_FLAG(absl::Duration, claim);
ABSL_DECLARE_FLAG(absl::Duration, wait);
ABSL_DECLARE_FLAG(std::string, holder);

namespace ctxsel::cli {

// The job of the select/explain/run flags (--kernel, --construct, --var,
// --policy, --nodes or --here, --device_filter, --devices or
// --from_allocation, --count, --require, --require_variant, ...);
// INVALID_ARGUMENT naming the flag. --from_allocation lists the devices of
// the allocation's node through `client` (launcher_env.h says how the
// variables map): that node is --nodes when it names one, else this host
// (--here), and the job is restricted to it; that call's errors are
// returned as they are. Commands without --from_allocation may pass null.
// Without `read_variables`, --var is left to the caller (coverage reads it
// as ranges).
absl::StatusOr<v1::Job> JobFromFlags(client::CtxselClient* client,
                                     bool read_variables = true);

// JobFromFlags() plus a claim: for --claim, or `default_claim` when --claim
// is not given (0: none), held by --holder (default DefaultHolder()).
// INVALID_ARGUMENT for --holder without a claim, which would record
// nothing.
absl::StatusOr<v1::SelectRequest> SelectRequestFromFlags(
    client::CtxselClient* client, absl::Duration default_claim);

// Who holds a claim this process makes when --holder is not given: the
// Slurm step ("slurm-<job>.<step>", SlurmHolder in launcher_env.h) inside
// one, so that the step's epilog can release it by holder; else
// "user@host:pid".
std::string DefaultHolder();

// Select; with a claim and a `wait`, the claim waits in the server's queue
// (ClaimRequest.wait, CtxselClient::SelectQueued: `sleep` is asked between
// 20 ms slices whether to go on). A server older than the queue answers
// every fitting device claimed at once: then, and without a claim, while
// ExitCodeOf the answer is kExitExhausted (CLAIMS_EXHAUSTED, or STORE_FULL;
// never a rate or size limit) and `wait` has not passed, tries again with
// backoff (base/backoff.h: 100ms doubling to 2s, jittered), sleeping through
// `sleep`, which returns false when the wait should stop (e.g. a signal), and
// saying on stderr what it waits for (WaitNotice, wait_notice.h). The last
// answer otherwise. An OK answer that does not keep the job's terms (Job.count
// ranks, allowed_devices, required_kind, require_variant, min_memory_bytes,
// min_compute_units, images: a server that predates them ignores them) has its
// claims released and is FAILED_PRECONDITION saying which.
absl::StatusOr<v1::SelectResponse> SelectWaiting(
    client::CtxselClient& client, const v1::SelectRequest& request,
    absl::Duration wait,
    const std::function<bool(absl::Duration)>& sleep = [](absl::Duration d) {
      absl::SleepFor(d);
      return true;
    });

// The job flags (JobFromFlags) that select, explain and run share, for
// their usage lines (which are also the flags each takes). The policy names
// repeat base/policy.def's (select_command_test holds them to it).
#define CTXSEL_CLI_JOB_FLAGS                                             \
  "--kernel=K [--construct=C,...] [--var=NAME=INTEGER,...] "             \
  "[--policy=least_loaded|spread|pack] [--nodes=NODE,...] "              \
  "[--device_filter=SELECTOR] [--impl_vendor=V,...] [--requires=R,...] " \
  "[--top_k=N] [--here] [--devices=ID_OR_UUID,...|--from_allocation] "   \
  "[--count=N [--same_node]] [--require=KIND] [--require_variant] "      \
  "[--min_memory=SIZE] [--min_compute_units=N] "                         \
  "[--compiler=spec|gcc-12|clang-14] [--ties=first|last] [--binary=APP]"

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_SELECT_COMMAND_H_
