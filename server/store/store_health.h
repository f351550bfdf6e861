// store_health.h: a Store that tells whether the store it wraps can take
// writes, so the server can report it per service in gRPC health checks
// (Placement, Variants and Admin NOT_SERVING while it cannot; docs/api.md,
// "Health").
//
// The store is unavailable from the first write (Apply, ApplyClaims) that
// fails — disk full, --max_store_bytes reached, damaged or unwritable
// files, etcd unreachable — until a write succeeds again (a delete that
// frees room, say). ABORTED (a shared store's guard refused the write) is
// a store that works.
// `on_change` runs on each flip, in the writing thread, in flip order.
//
//   auto store = std::make_unique<StoreHealth>(std::move(sqlite), [&](bool ok)
//   {
//     health->SetServingStatus("ctxsel.v1.Placement", ok);
//   });
#ifndef CTXSEL_SERVER_STORE_STORE_HEALTH_H_
#define CTXSEL_SERVER_STORE_STORE_HEALTH_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/forwarding_store.h"
#include "server/store/store.h"

namespace ctxsel::server {

class StoreHealth final : public ForwardingStore {
 public:
  StoreHealth(std::unique_ptr<Store> store,
              std::function<void(bool available)> on_change)
      : ForwardingStore(std::move(store)), on_change_(std::move(on_change)) {}

  bool available() const ABSL_LOCKS_EXCLUDED(mu_);
  // A store that other servers share (etcd) answers again (this replica's
  // watch is back): it takes writes, before any write has proved it.
  void Reachable() ABSL_LOCKS_EXCLUDED(mu_) {
    Record(absl::OkStatus()).IgnoreError();
  }
  // This replica has lost sight of the shared store (its watch broke): the
  // writing services say NOT_SERVING before a write has to fail to show it
  // (a cut-off replica's writes each wait for etcd's call timeouts).
  void Unreachable() ABSL_LOCKS_EXCLUDED(mu_) {
    Record(absl::UnavailableError("store out of sight")).IgnoreError();
  }

  absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override {
    absl::StatusOr<int64_t> applied = wrapped().Apply(batch);
    // The outcome travels in `applied`; Record only notes it.
    Record(applied.status()).IgnoreError();
    return applied;
  }
  absl::Status ApplyClaims(const ClaimBatch& batch) override {
    return Record(wrapped().ApplyClaims(batch));
  }

 private:
  // Notes the outcome of a write and returns it unchanged.
  absl::Status Record(absl::Status written) ABSL_LOCKS_EXCLUDED(mu_);

  const std::function<void(bool)> on_change_;
  mutable absl::Mutex mu_;
  bool available_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_STORE_HEALTH_H_
