// metered_store.h: a Store that times every write of the Store it wraps and
// counts the failed ones (Metrics::RecordStoreWrite), so neither the
// registry, the claims nor the SQLite store knows about metrics.
//
//   MeteredStore store(std::move(sqlite_store), &metrics);
//   VariantRegistry::Open(&store, ...);
#ifndef CTXSEL_SERVER_STORE_METERED_STORE_H_
#define CTXSEL_SERVER_STORE_METERED_STORE_H_

#include <memory>
#include <utility>

#include "server/metrics/metrics.h"
#include "server/store/forwarding_store.h"
#include "server/store/store.h"

namespace ctxsel::server {

class MeteredStore final : public ForwardingStore {
 public:
  // `metrics` must outlive this store.
  MeteredStore(std::unique_ptr<Store> store, Metrics* metrics)
      : ForwardingStore(std::move(store)), metrics_(metrics) {}

  absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override;
  absl::Status ApplyClaims(const ClaimBatch& batch) override;

 private:
  Metrics* const metrics_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_METERED_STORE_H_
