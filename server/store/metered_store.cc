#include "server/store/metered_store.h"

#include "absl/time/clock.h"

namespace ctxsel::server {

absl::StatusOr<int64_t> MeteredStore::Apply(const StoreBatch& batch) {
  const absl::Time start = absl::Now();
  absl::StatusOr<int64_t> applied = wrapped().Apply(batch);
  metrics_->RecordStoreWrite("variants", applied.ok(), absl::Now() - start);
  return applied;
}

absl::Status MeteredStore::ApplyClaims(const ClaimBatch& batch) {
  const absl::Time start = absl::Now();
  absl::Status applied = wrapped().ApplyClaims(batch);
  metrics_->RecordStoreWrite("claims", applied.ok(), absl::Now() - start);
  return applied;
}

}  // namespace ctxsel::server
