// metered_store.h: a Store that times every write of the Store it wraps and
// counts the failed ones (Metrics::RecordStoreWrite), so neither the
// registry, the claims nor the SQLite store knows about metrics.
//
//   MeteredStore store(std::move(sqlite_store), &metrics);
//   VariantRegistry::Open(&store, ...);
#ifndef CTXSEL_SERVER_METERED_STORE_H_
#define CTXSEL_SERVER_METERED_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "server/metrics.h"
#include "server/store.h"

namespace ctxsel::server {

class MeteredStore final : public Store {
 public:
  // `metrics` must outlive this store.
  MeteredStore(std::unique_ptr<Store> store, Metrics* metrics)
      : store_(std::move(store)), metrics_(metrics) {}

  absl::StatusOr<StoreContents> Load() override { return store_->Load(); }
  absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override;
  absl::StatusOr<StoreSummary> Backup(const std::string& path) override {
    return store_->Backup(path);
  }
  std::string Describe() const override { return store_->Describe(); }
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override {
    return store_->LoadClaims();
  }
  absl::Status ApplyClaims(const ClaimBatch& batch) override;
  void CatchUp() override { store_->CatchUp(); }
  absl::StatusOr<std::vector<ClaimRecord>> ClaimsHolding(
      const std::vector<ClaimRecord>& wanted) override {
    return store_->ClaimsHolding(wanted);
  }

 private:
  const std::unique_ptr<Store> store_;
  Metrics* const metrics_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_METERED_STORE_H_
