// replica_sync.h: keeps one replica's registry and claims in step with the
// etcd store that every replica writes (docs/deployment.md). It watches the
// store's prefix from the revision the registry was loaded at and applies
// what other replicas stored — a kernel's variants, a claim made, renewed
// or ended — without writing anything back (VariantRegistry::ApplyStored,
// ClaimBook::ApplyStored). Its own replica's writes come back through the
// watch too and are skipped by revision.
//
// The watch's thread only queues what etcd sends; a thread of the sync
// applies everything queued at once, as one batch: each kernel changed in
// the batch is rebuilt once (a rebuild reads all the kernel's variants),
// so a replica that falls behind a high write rate catches up in larger
// batches instead of rebuilding once per write and falling further behind.
//
// When etcd cannot be reached (or has no leader, or is silent for 3 s:
// EtcdClient::Watch) the watch reconnects by itself (growing backoff with
// jitter up to 2 s, base/backoff.h) from the revision after the last one
// applied; meanwhile the replica answers reads from what it has, and
// stale() says so (Explain's `stale`, health's "ctxsel.store" service, the
// log).
//
//   auto sync = ReplicaSync::Start(store, registry, claims);
//   if (sync->stale()) { ... }
#ifndef CTXSEL_SERVER_REPLICAS_REPLICA_SYNC_H_
#define CTXSEL_SERVER_REPLICAS_REPLICA_SYNC_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/claims/claims.h"
#include "server/registry/variant_registry.h"
#include "server/store/etcd/etcd_client.h"
#include "server/store/etcd/etcd_store.h"

namespace ctxsel::server::etcd {

class ReplicaSync {
 public:
  // Reads the variants at store->loaded_revision() (the registry's view)
  // and watches from the next revision. The store, registry and claims
  // must outlive the sync. The store's error when the first read fails.
  static absl::StatusOr<std::unique_ptr<ReplicaSync>> Start(
      EtcdStore* store, VariantRegistry* registry, ClaimBook* claims);
  ~ReplicaSync();

  // True while the watch is broken: reads answer from the last state.
  bool stale() const { return stale_.load(); }
  // Calls `callback` now with stale(), and on every change of it (on the
  // watch's thread).
  void OnStaleChanged(std::function<void(bool stale)> callback);

  // The last revision applied.
  int64_t applied_revision() const { return applied_.load(); }

  // Reads every variant and claim again and applies them, as the watch
  // does after a compaction took the revisions it had not seen yet;
  // returns the revision read at. A corrupt record is left out (see
  // EtcdStore::CorruptRecord).
  int64_t Reload();

 private:
  ReplicaSync(EtcdStore* store, VariantRegistry* registry, ClaimBook* claims)
      : store_(store), registry_(registry), claims_(claims) {}
  // The watch's callback: queues the response.
  void OnEvents(const etcdserverpb::WatchResponse& response);
  // The applying thread: applies what is queued, a batch at a time.
  void ApplyLoop();
  // Applies `batch` (in revision order); events at or below the applied
  // revision (a reload read them already) are skipped.
  void ApplyBatch(const std::vector<etcdserverpb::WatchResponse>& batch);
  void OnState(bool connected);
  // kernel -> variant key -> record (revision = the key's mod_revision).
  using Mirror = std::map<std::string, std::map<std::string, VariantRecord>>;
  // The mirrored variants of `kernel`, for the registry; drops the
  // kernel from the mirror when it has none left.
  std::vector<VariantRecord> MirroredRecords(const std::string& kernel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReadVariants(int64_t revision, Mirror& mirror,
                            std::map<std::string, int64_t>& kernels,
                            int64_t& read_at);

  EtcdStore* const store_;
  VariantRegistry* const registry_;
  ClaimBook* const claims_;
  absl::Mutex mu_;
  Mirror mirror_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stale_{false};
  absl::Mutex callback_mu_;
  std::function<void(bool)> on_stale_changed_ ABSL_GUARDED_BY(callback_mu_);
  std::atomic<int64_t> applied_{0};
  absl::Mutex queue_mu_;
  std::vector<etcdserverpb::WatchResponse> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::thread applier_;
  std::unique_ptr<EtcdWatch> watch_;  // last: stopped first
};

}  // namespace ctxsel::server::etcd

#endif  // CTXSEL_SERVER_REPLICAS_REPLICA_SYNC_H_
