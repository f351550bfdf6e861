#include "server/store/store_health.h"

namespace ctxsel::server {

bool StoreHealth::available() const {
  absl::MutexLock lock(&mu_);
  return available_;
}

absl::Status StoreHealth::Record(absl::Status written) {
  // Held while telling, so that two flips reach on_change in their order.
  absl::MutexLock lock(&mu_);
  if (absl::IsAborted(written)) return written;  // the store answered
  if (written.ok() != available_) {
    available_ = written.ok();
    if (on_change_) on_change_(available_);
  }
  return written;
}

}  // namespace ctxsel::server
