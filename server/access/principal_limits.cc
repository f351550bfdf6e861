#include "server/access/principal_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_details.h"

namespace ctxsel::server {
namespace {

// Each budget's option, words for messages and period: the one table of
// what the limits are.
struct BudgetRow {
  Budget budget;
  double PrincipalLimitOptions::*per_period;
  const char* what;
  const char* unit;
  absl::Duration period;
};
constexpr BudgetRow kBudgets[] = {
    {Budget::kReport, &PrincipalLimitOptions::reports_per_minute, "reports",
     "minute", absl::Minutes(1)},
    {Budget::kHeartbeat, &PrincipalLimitOptions::heartbeats_per_second,
     "heartbeats", "second", absl::Seconds(1)},
    {Budget::kRegistration, &PrincipalLimitOptions::registrations_per_minute,
     "registrations", "minute", absl::Minutes(1)},
};

const BudgetRow& Row(Budget budget) {
  for (const BudgetRow& row : kBudgets) {
    if (row.budget == budget) return row;
  }
  return kBudgets[0];
}

}  // namespace

PrincipalLimits::PrincipalLimits(PrincipalLimitOptions options)
    : options_(std::move(options)) {}

absl::Status PrincipalLimits::Take(Budget budget,
                                   const std::string& principal) {
  const BudgetRow& row = Row(budget);
  const double per_period = options_.*row.per_period;
  if (per_period <= 0) return absl::OkStatus();
  const absl::Time now = options_.now();
  absl::MutexLock lock(&mu_);
  auto [it, added] = buckets_.try_emplace({budget, principal});
  Bucket& bucket = it->second;
  if (added) {
    bucket.tokens = per_period;  // a full burst to start with
  } else {
    const double periods =
        std::max(0.0, absl::FDivDuration(now - bucket.refilled, row.period));
    bucket.tokens = std::min(per_period, bucket.tokens + periods * per_period);
  }
  bucket.refilled = now;
  if (bucket.tokens < 1) {
    // A reason of its own: a caller retries a rate limit after a pause,
    // while RESOURCE_EXHAUSTED from claims means "wait for a device".
    return WithErrorInfo(absl::ResourceExhaustedError(absl::StrCat(
                             "'", principal, "' sent more than ", per_period,
                             " ", row.what, " per ", row.unit, "; slow down")),
                         kReasonRateLimited, {{"principal", principal}});
  }
  bucket.tokens -= 1;
  return absl::OkStatus();
}

absl::StatusOr<PrincipalLimits::Stream> PrincipalLimits::OpenStream(
    const std::string& principal) {
  absl::MutexLock lock(&mu_);
  int& open = streams_[principal];
  if (options_.max_streams > 0 && open >= options_.max_streams) {
    return WithErrorInfo(absl::ResourceExhaustedError(
                             absl::StrCat("'", principal, "' already holds ",
                                          open, " open streams (the limit)")),
                         kReasonRateLimited, {{"principal", principal}});
  }
  ++open;
  return Stream(this, principal);
}

void PrincipalLimits::CloseStream(const std::string& principal) {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(principal);
  if (it != streams_.end() && --it->second <= 0) streams_.erase(it);
}

PrincipalLimits::Stream::~Stream() {
  if (limits_ != nullptr) limits_->CloseStream(principal_);
}

}  // namespace ctxsel::server
