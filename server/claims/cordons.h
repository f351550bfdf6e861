// cordons.h: operators' cordons (`ctxsel-cli devices cordon`), kept in the
// Store (SQLite or etcd) and applied to placement.
//
// A cordon holds one device (by id) or every device of a node: placement
// skips them (Placer::SetCordons) until it is removed; a draining cordon
// also makes renewals of the claims on them fail with DEVICE_DRAINED
// (CheckRenewal), so that `ctxsel-cli run` stops its command. Every change
// is written to the store before it is applied here; Reload() reads the
// store again, at start and on every housekeeping tick, which is how a
// restarted server and the other replicas of an etcd store learn them.
//
//   CordonBook cordons(store, &placer);
//   CTXSEL_RETURN_IF_ERROR(cordons.Reload());
//   cordons.Put({.device = "n1/gpu0", .reason = "fan", .drain = true});
//   cordons.CheckRenewal("n1/gpu0", "n1");  // FailedPrecondition
//
// Thread safety: every method may be called from any thread.
#ifndef CTXSEL_SERVER_CLAIMS_CORDONS_H_
#define CTXSEL_SERVER_CLAIMS_CORDONS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/model/cordon.h"
#include "server/placement/placer.h"
#include "server/store/store.h"

namespace ctxsel::server {

class CordonBook {
 public:
  // `store` and `placer` must outlive the book.
  CordonBook(Store* store, placement::Placer* placer)
      : store_(store), placer_(placer) {}

  // Reads the store's cordons and applies them; the store's error (the
  // cordons known before stay) otherwise.
  absl::Status Reload();

  // Stores `cordon` (exactly one of device and node; a reason; both names
  // by the names rule, else InvalidArgumentError naming the field) and
  // applies it; replaces a cordon of the same device or node.
  absl::StatusOr<Cordon> Put(Cordon cordon);

  // Removes the cordon of `device` or of `node` (exactly one given);
  // NotFoundError (CORDON_NOT_FOUND) when there is none.
  absl::Status Remove(const std::string& device, const std::string& node);

  // The cordons, by Key().
  std::vector<Cordon> List() const;

  // Calls `changed` with the live nodes a change of the cordons touched
  // (for the inventory's watch events), after each change; set once,
  // before the book is shared.
  void OnChange(std::function<void(const std::vector<std::string>&)> changed) {
    changed_ = std::move(changed);
  }

  // OK unless a draining cordon holds `device` (or its node `node`):
  // FailedPreconditionError with reason DEVICE_DRAINED, naming the cordon
  // and its reason.
  absl::Status CheckRenewal(const std::string& device,
                            const std::string& node) const;

 private:
  void ApplyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store* const store_;
  placement::Placer* const placer_;
  mutable absl::Mutex mu_;
  std::map<std::string, Cordon> by_key_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::vector<std::string>&)> changed_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_CLAIMS_CORDONS_H_
