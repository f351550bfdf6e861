// ctxsel-cli claims: the claims launchers hold on devices.
//
//   ctxsel-cli claims ls [NODE] [--json]
//   ctxsel-cli claims ls --waiting    # the claims waiting in the queue
//   ctxsel-cli claims renew CLAIM_ID [--claim=5m]
//   ctxsel-cli claims release CLAIM_ID
//   ctxsel-cli claims release --holder=slurm-42.0   # every claim of a job
//
// Claims are made by `select --claim=DURATION` and `run`. Exit codes as in
// command.h; an unknown, released or expired claim is NOT_FOUND (exit 2);
// release by holder exits 0 also when the holder has none, so an epilog
// can always call it.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/proto_time.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/select_command.h"
#include "client/cli/service_output.h"

ABSL_FLAG(bool, waiting, false,
          "claims ls: list the claiming selects waiting in the server's "
          "queue (select --wait), in the order they will be served.");

namespace ctxsel::cli {
namespace {

// A renewal with no --claim extends by this much.
constexpr absl::Duration kDefaultRenewal = absl::Minutes(5);

// "1m5s" for a Duration, whole seconds.
std::string WaitedText(const google::protobuf::Duration& d) {
  return absl::FormatDuration(
      absl::Trunc(FromProtoDuration(d), absl::Seconds(1)));
}

// What a claim holds: "whole", "20 GiB", "25%", "20 GiB, 25%".
std::string ShareText(const v1::Claim& c) {
  std::string text;
  if (c.memory_bytes() > 0) {
    text = absl::StrCat(c.memory_bytes() >> 20, " MiB");
    if (c.memory_bytes() % (uint64_t{1} << 30) == 0) {
      text = absl::StrCat(c.memory_bytes() >> 30, " GiB");
    }
  }
  if (c.compute_percent() > 0) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", c.compute_percent(), "%");
  }
  return text.empty() ? "whole" : text;
}

int ListWaiters(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kClaimsCommand);
  auto answer = ConnectToServer()->ListClaimsAndWaiters("");
  if (!answer.ok()) return ReportError("claims ls", answer.status());
  v1::ListClaimsResponse response;
  Listing listing;
  listing.columns = {{"POSITION"}, {"KERNEL"}, {"HOLDER"},
                     {"PRIORITY"}, {"WAITED"}, {"UNTIL", true}};
  for (const v1::ClaimWaiter& w : answer->waiters()) {
    *response.add_waiters() = w;
    listing.rows.push_back(
        {absl::StrCat(w.position()), w.kernel(), w.holder(),
         absl::StrCat(w.priority(), w.promoted() ? " (promoted)" : ""),
         WaitedText(w.waited()),
         absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                          FromProtoTimestamp(w.expire_time()),
                          absl::UTCTimeZone())});
    listing.names.push_back(w.holder());
  }
  PrintListing(response, listing);
  return kExitOk;
}

int ListClaims(const std::vector<std::string>& args) {
  if (absl::GetFlag(FLAGS_waiting)) return ListWaiters(args);
  if (args.size() > 1) return UsageError(kClaimsCommand);
  auto claims = ConnectToServer()->ListClaims(args.empty() ? "" : args[0]);
  if (!claims.ok()) return ReportError("claims ls", claims.status());
  v1::ListClaimsResponse response;
  Listing listing;
  listing.columns = {{"CLAIM"},  {"DEVICE"},  {"NODE"},
                     {"HOLDER"}, {"EXPIRES"}, {"SHARE", true}};
  for (const v1::Claim& c : *claims) {
    *response.add_claims() = c;
    listing.rows.push_back({c.id(), c.device(), c.node(), c.holder(),
                            ExpiryText(c), ShareText(c)});
    listing.names.push_back(c.id());
  }
  PrintListing(response, listing);
  return kExitOk;
}

int RenewClaim(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError(kClaimsCommand);
  absl::Duration duration = absl::GetFlag(FLAGS_claim);
  if (duration == absl::ZeroDuration()) duration = kDefaultRenewal;
  auto claim = ConnectToServer()->RenewClaim(
      args[0], absl::ToChronoMilliseconds(duration));
  if (!claim.ok()) return ReportError("claims renew", claim.status());
  if (!PrintMessage(*claim)) {
    std::printf("claim %s on %s until %s\n", claim->id().c_str(),
                claim->device().c_str(), ExpiryText(*claim).c_str());
  }
  return kExitOk;
}

int ReleaseClaim(const std::vector<std::string>& args) {
  const std::string holder = absl::GetFlag(FLAGS_holder);
  if (args.size() != (holder.empty() ? 1u : 0u)) {
    return UsageError(kClaimsCommand);
  }
  auto client = ConnectToServer();
  if (!holder.empty()) {
    absl::StatusOr<int> released = client->ReleaseClaimsOf(holder);
    if (!released.ok()) return ReportError("claims release", released.status());
    std::printf("released %d claim%s of %s\n", *released,
                *released == 1 ? "" : "s", holder.c_str());
    return kExitOk;
  }
  absl::Status released = client->ReleaseClaim(args[0]);
  if (!released.ok()) return ReportError("claims release", released);
  std::printf("released %s\n", args[0].c_str());
  return kExitOk;
}

int RunClaims(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError(kClaimsCommand);
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (!absl::GetFlag(FLAGS_holder).empty() && args[0] != "release") {
    return UsageError(kClaimsCommand);  // --holder would be ignored
  }
  if (absl::GetFlag(FLAGS_waiting) && args[0] != "ls") {
    return UsageError(kClaimsCommand);  // --waiting would be ignored
  }
  if (args[0] == "ls") return ListClaims(rest);
  if (args[0] == "renew") return RenewClaim(rest);
  if (args[0] == "release") return ReleaseClaim(rest);
  return UsageError(kClaimsCommand);
}

}  // namespace

const Command kClaimsCommand = {
    "claims",
    "claims ls [NODE] [--json] | ls --waiting\n"
    "claims renew CLAIM_ID [--claim=DURATION]\n"
    "claims release CLAIM_ID | --holder=WHO",
    "List, renew (default 5m) or release claims (one, or all of a holder's).",
    RunClaims};

}  // namespace ctxsel::cli
