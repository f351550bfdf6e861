// forwarding_store.h: a Store that passes every call to the Store it wraps,
// the base of the decorators (MeteredStore, StoreHealth): each overrides
// only the calls it watches, so a method added to Store is forwarded in one
// place (a decorator that forgot one with a default, such as CatchUp,
// would silently hide the wrapped store's).
//
//   class CountingStore final : public ForwardingStore {
//    public:
//     using ForwardingStore::ForwardingStore;
//     absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override {
//       ++writes_;
//       return wrapped().Apply(batch);
//     }
//   };
#ifndef CTXSEL_SERVER_STORE_FORWARDING_STORE_H_
#define CTXSEL_SERVER_STORE_FORWARDING_STORE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/store/store.h"

namespace ctxsel::server {

class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(std::unique_ptr<Store> store)
      : store_(std::move(store)) {}

  absl::StatusOr<StoreContents> Load() override { return store_->Load(); }
  absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override {
    return store_->Apply(batch);
  }
  absl::StatusOr<StoreSummary> Backup(const std::string& path) override {
    return store_->Backup(path);
  }
  std::string Describe() const override { return store_->Describe(); }
  absl::StatusOr<std::vector<ClaimRecord>> ClaimsHolding(
      const std::vector<ClaimRecord>& wanted) override {
    return store_->ClaimsHolding(wanted);
  }
  void CatchUp() override { store_->CatchUp(); }
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override {
    return store_->LoadClaims();
  }
  absl::Status ApplyClaims(const ClaimBatch& batch) override {
    return store_->ApplyClaims(batch);
  }
  absl::StatusOr<std::vector<Cordon>> LoadCordons() override {
    return store_->LoadCordons();
  }
  absl::Status PutCordon(const Cordon& cordon) override {
    return store_->PutCordon(cordon);
  }
  absl::Status DeleteCordon(const std::string& key) override {
    return store_->DeleteCordon(key);
  }

 protected:
  Store& wrapped() const { return *store_; }

 private:
  const std::unique_ptr<Store> store_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_FORWARDING_STORE_H_
