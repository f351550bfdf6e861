// store.h: durable storage of the variant registry, of device claims and
// of operators' cordons.
//
// The registry (and the ClaimBook, server/claims/claims.h) keeps its state in
// memory and writes every change through a `Store` before it acknowledges
// the RPC. A Store holds variant records and
// one number, the registry revision; it knows nothing of selectors, gRPC or
// placement. The embedded default is SqliteStore (server/store/sqlite_store.h);
// the replicated backend is EtcdStore (server/store/etcd/etcd_store.h: one key
// per variant, `Apply` as one transaction guarded by the kernels' revisions,
// revisions from etcd).
//
//   absl::StatusOr<std::unique_ptr<Store>> store =
//       SqliteStore::Open("/var/lib/ctxsel");
//   absl::StatusOr<StoreContents> contents = (*store)->Load();
//   StoreBatch batch;
//   batch.revision = contents->revision + 1;
//   batch.puts.push_back(record);
//   absl::StatusOr<int64_t> stored = (*store)->Apply(batch);  // durable when
//   OK
#ifndef CTXSEL_SERVER_STORE_STORE_H_
#define CTXSEL_SERVER_STORE_STORE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/store_file.h"  // StoreSummary
#include "server/model/cordon.h"
#include "server/model/variant_metadata.h"

namespace ctxsel::server {

// A variant as stored: the selector is kept as text and parsed on load.
struct VariantRecord {
  std::string kernel;
  std::string name;
  std::string selector_text;
  int64_t order = 0;
  int64_t revision = 0;  // the registry revision that stored it
  VariantMetadata metadata;
};

// Everything a store holds.
struct StoreContents {
  int64_t revision = 0;                 // 0 for a new, empty store
  std::vector<VariantRecord> variants;  // ordered by (kernel, order)
  // The revision that last changed each kernel (kernels whose variants are
  // all deleted too), where the store keeps it (etcd); empty otherwise.
  std::map<std::string, int64_t> kernel_revisions;
};

// One atomic change: first the deletions, then the puts, then the revision.
struct StoreBatch {
  // Every variant of these kernels is removed.
  std::vector<std::string> clear_kernels;
  // (kernel, name) pairs removed; absent ones are ignored.
  std::vector<std::pair<std::string, std::string>> deletes;
  // Inserted, or replacing the record with the same (kernel, name).
  std::vector<VariantRecord> puts;
  // The registry revision after the batch, for a store that numbers its
  // changes as the caller says (SQLite); etcd numbers them itself.
  int64_t revision = 0;
  // The revision of each kernel the batch changes, as the caller last saw
  // it (0: never stored). A store that several servers write (etcd)
  // applies the batch only if every one still holds, else AbortedError; a
  // store with one writer has nothing to compare.
  std::map<std::string, int64_t> expected_kernel_revisions;
};

// --- Claims (server/claims/claims.h)
// ---------------------------------------------

// A launcher's claim on a device, as stored.
struct ClaimRecord {
  std::string id;
  std::string node;
  std::string device;
  std::string holder;
  int64_t expires_unix_ms = 0;
  std::string owner;
  // Which of the device's claim_capacity places the claim holds (0 for a
  // device of capacity 1): a store that several servers write (etcd)
  // refuses a second claim on the same place.
  int slot = 0;
  // The share it holds (ClaimShare); both 0: the whole device.
  uint64_t memory_bytes = 0;
  int32_t compute_percent = 0;
};

// One atomic change of the claims: the deletions, then the puts.
struct ClaimBatch {
  std::vector<std::string> deletes;  // claim ids; absent ones are ignored
  // Claims this server found expired (ids). A store that several servers
  // write ends one only if its stored expiry has passed and nobody changed
  // it since it was read: another server may have renewed it.
  std::vector<std::string> expired;
  std::vector<ClaimRecord> puts;  // inserted or replacing the same id
  // The claims (ids) the caller counted on each device (by id) of a new
  // claim in `puts` when it found room there. A store that several servers
  // write applies the batch only if each such device holds no other live
  // claim, then and when the batch commits, else ABORTED: room is decided
  // against all of a device's claims, so two servers never grant shares of
  // a device, or a share and the whole device, beyond it. A device not
  // listed is guarded by its places only.
  std::map<std::string, std::set<std::string>> counted;
};

class Store {
 public:
  virtual ~Store() = default;

  // Reads the whole store. DataLossError when it is corrupt.
  virtual absl::StatusOr<StoreContents> Load() = 0;

  // Applies `batch` atomically and durably: when OK is returned the change
  // survives a crash of the process or the machine; on error nothing of it
  // is visible, now or after a restart. Error messages go to clients as
  // they are, so they name no file; the details go to the server log.
  // RESOURCE_EXHAUSTED when the disk (or the store's size limit) is full;
  // ABORTED when batch.expected_kernel_revisions no longer hold; UNAVAILABLE
  // when a remote store cannot be reached. Returns the revision the batch
  // was stored at: batch.revision, or the store's own number (etcd).
  virtual absl::StatusOr<int64_t> Apply(const StoreBatch& batch) = 0;

  // Writes a consistent copy of the whole store, as of one revision, to the
  // file `path` (created or overwritten), while Apply calls wait; the copy
  // is something this kind of store can be restored from. Errors as Apply's.
  virtual absl::StatusOr<StoreSummary> Backup(const std::string& path) = 0;

  // Where the data lives, for logs, e.g. "sqlite:/var/lib/ctxsel/ctxsel.db".
  virtual std::string Describe() const = 0;

  // After ApplyClaims said ABORTED: the stored claims that hold the
  // (node, device, slot) places `wanted` asked for, and the other live
  // claims on their devices, so the caller learns them without waiting for
  // CatchUp. A store with one writer has none.
  virtual absl::StatusOr<std::vector<ClaimRecord>> ClaimsHolding(
      const std::vector<ClaimRecord>& wanted) {
    return std::vector<ClaimRecord>{};
  }

  // Returns once the changes other servers made to a store they share
  // (etcd) before this call are in this server's registry and claims, or
  // after a bounded wait; a store with one writer returns at once. Callers
  // use it after ABORTED, without holding their own locks.
  virtual void CatchUp() {}

  // Every stored claim (expired ones too: the ClaimBook judges), by id.
  virtual absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() = 0;
  // Applies `batch` atomically and durably, with Apply's guarantees;
  // ABORTED when a put takes a (node, device, slot) that another claim
  // holds, or its device holds a claim the batch did not count
  // (ClaimBatch::counted; a store that several servers write).
  virtual absl::Status ApplyClaims(const ClaimBatch& batch) = 0;

  // --- Cordons (server/claims/cordons.h): few, and kept until removed.

  // Every stored cordon, by Cordon::Key().
  virtual absl::StatusOr<std::vector<Cordon>> LoadCordons() {
    return absl::UnimplementedError("this store keeps no cordons");
  }
  // Stores `cordon` durably, replacing the one with the same Key().
  virtual absl::Status PutCordon(const Cordon& cordon) {
    return absl::UnimplementedError("this store keeps no cordons");
  }
  // Removes the cordon with this Key(); NotFoundError when there is none.
  virtual absl::Status DeleteCordon(const std::string& key) {
    return absl::UnimplementedError("this store keeps no cordons");
  }
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_STORE_H_
