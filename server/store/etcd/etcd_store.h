// etcd_store.h: the replicated Store (server/store/store.h) on etcd, so that
// several ctxsel-server replicas share one registry and one set of claims
// (docs/deployment.md). Selected with --store=etcd://HOST:PORT[,...].
//
// Keys, under the prefix (--store_prefix, default "/ctxsel/"), with kernel,
// variant, node and device names escaped ('%' and '/' as %25 and %2F):
//   variants/KERNEL/NAME    one variant: JSON (kernel, name, selector,
//                           order, metadata); its revision is the key's
//                           mod_revision
//   kernels/KERNEL          touched by every change of the kernel: its
//                           mod_revision is the kernel's revision, which
//                           guards the next change (optimistic concurrency)
//   claims/ID               one claim: JSON, on a lease that ends with it
//   claim-slots/NODE/DEVICE/SLOT
//                           the claim id holding that place of the device,
//                           on the claim's lease: created only if absent,
//                           so two replicas never hand out the same place;
//                           a new claim also needs the device's places to
//                           hold only the claims its replica counted
//                           (ClaimBatch::counted), and none created since
//                           it read them, so shares never over-commit
//   nodes/NODE              one node of the fleet (node_sync.h)
//   cordons/KEY             one operator's cordon (Cordon::Key()): JSON,
//                           kept until removed; replicas read them again
//                           every housekeeping tick
// Apply is one etcd transaction (all or nothing) that holds only if every
// kernel it changes is still at the revision the registry last saw; else
// ABORTED. Revisions are etcd's. Other replicas' changes reach this one
// through ReplicaSync (replica_sync.h), which tells the store how far it
// has applied them (CatchUp waits for that).
//
//   absl::StatusOr<std::unique_ptr<EtcdStore>> store =
//       EtcdStore::Open({"127.0.0.1:2379"}, "/ctxsel/");
#ifndef CTXSEL_SERVER_STORE_ETCD_ETCD_STORE_H_
#define CTXSEL_SERVER_STORE_ETCD_ETCD_STORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/etcd/etcd_client.h"
#include "server/store/store.h"

namespace ctxsel::server::etcd {

// '%' and '/' in a name as %25 and %2F, so a name is one key segment.
std::string EscapeKeySegment(const std::string& name);
std::string UnescapeKeySegment(const std::string& segment);
// The name in the key segment right after `folder` (a prefix of `key`,
// e.g. EtcdKeys::Kernels()), unescaped: "kernel/1" for folder
// "/p/variants/" and key "/p/variants/kernel%2F1/v".
std::string NameAfter(const std::string& folder, const std::string& key);

// The stored forms (JSON) of a variant and a claim, and back.
std::string VariantValue(const VariantRecord& record);
absl::StatusOr<VariantRecord> VariantFromValue(const std::string& value);
std::string ClaimValue(const ClaimRecord& record);
absl::StatusOr<ClaimRecord> ClaimFromValue(const std::string& value);
std::string CordonValue(const Cordon& cordon);
absl::StatusOr<Cordon> CordonFromValue(const std::string& value);

// The key layout under one prefix.
class EtcdKeys {
 public:
  explicit EtcdKeys(std::string prefix) : prefix_(std::move(prefix)) {}
  const std::string& prefix() const { return prefix_; }
  std::string Variants() const { return prefix_ + "variants/"; }
  std::string KernelVariants(const std::string& kernel) const {
    return Variants() + EscapeKeySegment(kernel) + "/";
  }
  std::string Variant(const std::string& kernel,
                      const std::string& name) const {
    return KernelVariants(kernel) + EscapeKeySegment(name);
  }
  std::string Kernels() const { return prefix_ + "kernels/"; }
  std::string Kernel(const std::string& kernel) const {
    return Kernels() + EscapeKeySegment(kernel);
  }
  std::string Claims() const { return prefix_ + "claims/"; }
  std::string Claim(const std::string& id) const {
    return Claims() + EscapeKeySegment(id);
  }
  // The places of one device (a folder), and one place in it.
  std::string DeviceClaimSlots(const ClaimRecord& claim) const;
  std::string ClaimSlot(const ClaimRecord& claim) const;
  std::string Nodes() const { return prefix_ + "nodes/"; }
  std::string Cordons() const { return prefix_ + "cordons/"; }
  std::string Cordon(const std::string& key) const {
    return Cordons() + EscapeKeySegment(key);
  }
  std::string Node(const std::string& node) const {
    return Nodes() + EscapeKeySegment(node);
  }

 private:
  const std::string prefix_;
};

class EtcdStore final : public Store {
 public:
  // Connects to etcd at `endpoints` and checks that it answers
  // (UNAVAILABLE naming the endpoints when none does within kOpenPatience;
  // within a second for a TLS handshake that fails on three tries in a row
  // or a refused login, EtcdClient's errors).
  // `prefix` must end with '/'.
  // A server may start just before etcd answers: Open keeps asking for
  // this long.
  static constexpr absl::Duration kOpenPatience = absl::Seconds(15);
  static absl::StatusOr<std::unique_ptr<EtcdStore>> Open(
      const std::vector<std::string>& endpoints, const std::string& prefix,
      EtcdClientOptions options = {});

  absl::StatusOr<StoreContents> Load() override;
  absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override;
  // Unimplemented: etcd is backed up with `etcdctl snapshot save`
  // (docs/deployment.md).
  absl::StatusOr<StoreSummary> Backup(const std::string& path) override;
  std::string Describe() const override;
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override;
  absl::Status ApplyClaims(const ClaimBatch& batch) override;
  absl::StatusOr<std::vector<ClaimRecord>> ClaimsHolding(
      const std::vector<ClaimRecord>& wanted) override;
  absl::StatusOr<std::vector<server::Cordon>> LoadCordons() override;
  absl::Status PutCordon(const server::Cordon& cordon) override;
  absl::Status DeleteCordon(const std::string& key) override;
  // Waits (up to 2 s) until ReplicaSync has applied the latest change
  // under the prefix; at once when no sync runs.
  void CatchUp() override;

  // The one policy for a record under the prefix that does not decode
  // (`why`: VariantFromValue's, ClaimFromValue's, a node's DATA_LOSS): it is
  // DATA_LOSS "<store>: key K: why", logged at error and counted here,
  // never passed over in silence. A replica that is starting answers with
  // it (Load, LoadClaims, NodeSync::Start: it does not start on a store it
  // cannot read); a running one (a watch event, the reload after a
  // compaction) keeps every other record and leaves this one out.
  absl::Status CorruptRecord(absl::string_view key,
                             const absl::Status& why) const;
  // How many CorruptRecord() saw; for tests and logs.
  int64_t corrupt_records() const { return corrupt_records_.load(); }
  // The claims under the prefix; a corrupt one is CorruptRecord()'s and
  // fails the read unless `skip_corrupt` (a running replica's reload).
  absl::StatusOr<std::vector<ClaimRecord>> ReadClaims(bool skip_corrupt);

  // The revision Load() read at: ReplicaSync watches from the next one.
  int64_t loaded_revision() const;
  // ReplicaSync: every change up to `revision` is applied here.
  void MarkApplied(int64_t revision);

  EtcdClient& client() { return *client_; }
  const EtcdKeys& keys() const { return keys_; }

 private:
  EtcdStore(std::unique_ptr<EtcdClient> client, std::string prefix)
      : client_(std::move(client)), keys_(std::move(prefix)) {}
  // Whether every claim of `puts` is stored as given, holding its place:
  // a transaction that answered an error or a failed compare after a retry
  // may have been stored by an earlier attempt.
  bool StoredAsPut(const std::vector<ClaimRecord>& puts);
  // The stored claims `ids` names; one gone or not decoding is left out.
  absl::StatusOr<std::vector<ClaimRecord>> StoredClaims(
      const std::vector<std::string>& ids);

  const std::unique_ptr<EtcdClient> client_;
  const EtcdKeys keys_;
  mutable std::atomic<int64_t> corrupt_records_{0};
  mutable absl::Mutex mu_;
  int64_t loaded_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // Unset until a ReplicaSync reports.
  std::optional<int64_t> applied_revision_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server::etcd

#endif  // CTXSEL_SERVER_STORE_ETCD_ETCD_STORE_H_
