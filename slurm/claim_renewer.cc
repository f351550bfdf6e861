#include "slurm/claim_renewer.h"

#include <vector>

namespace ctxsel::slurm {

ClaimRenewer::ClaimRenewer(client::CtxselClient& client, absl::Duration claim,
                           OnError on_error)
    : client_(client), claim_(claim), on_error_(std::move(on_error)) {
  thread_ = std::thread([this] { Run(); });
}

ClaimRenewer::~ClaimRenewer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void ClaimRenewer::Add(const std::string& claim_id) {
  absl::MutexLock lock(&mu_);
  claims_.insert(claim_id);
}

void ClaimRenewer::Remove(const std::string& claim_id) {
  absl::MutexLock lock(&mu_);
  claims_.erase(claim_id);
}

void ClaimRenewer::Run() {
  const absl::Duration period = claim_ / 2;
  while (true) {
    std::vector<std::string> due;
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), period)) return;
      due.assign(claims_.begin(), claims_.end());
    }
    for (const std::string& id : due) {
      absl::StatusOr<v1::Claim> renewed =
          client_.RenewClaim(id, absl::ToChronoMilliseconds(claim_));
      if (renewed.ok()) continue;
      absl::MutexLock lock(&mu_);
      // A claim released since the snapshot is not an error.
      if (claims_.count(id) != 0) on_error_(id, renewed.status());
    }
  }
}

}  // namespace ctxsel::slurm
