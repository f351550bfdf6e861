// store.h: durable storage of the variant registry and of device claims.
//
// The registry (and the ClaimBook, server/claims.h) keeps its state in
// memory and writes every change through a `Store` before it acknowledges
// the RPC. A Store holds variant records and
// one number, the registry revision; it knows nothing of selectors, gRPC or
// placement. The embedded default is SqliteStore (server/sqlite_store.h);
// the interface is small enough for a replicated backend (etcd: one key per
// variant plus a revision key, `Apply` as one transaction).
//
//   absl::StatusOr<std::unique_ptr<Store>> store =
//       SqliteStore::Open("/var/lib/ctxsel");
//   absl::StatusOr<StoreContents> contents = (*store)->Load();
//   StoreBatch batch;
//   batch.revision = contents->revision + 1;
//   batch.puts.push_back(record);
//   absl::Status written = (*store)->Apply(batch);  // durable when OK
#ifndef CTXSEL_SERVER_STORE_H_
#define CTXSEL_SERVER_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/variant_metadata.h"

namespace ctxsel::server {

// A variant as stored: the selector is kept as text and parsed on load.
struct VariantRecord {
  std::string kernel;
  std::string name;
  std::string selector_text;
  int64_t order = 0;
  int64_t revision = 0;
  VariantMetadata metadata;
};

// What a store (or a backup of one) holds, in numbers.
struct StoreSummary {
  int64_t revision = 0;
  int64_t variant_count = 0;
  int64_t kernel_count = 0;
};

// Everything a store holds.
struct StoreContents {
  int64_t revision = 0;                 // 0 for a new, empty store
  std::vector<VariantRecord> variants;  // ordered by (kernel, order)
};

// One atomic change: first the deletions, then the puts, then the revision.
struct StoreBatch {
  // Every variant of these kernels is removed.
  std::vector<std::string> clear_kernels;
  // (kernel, name) pairs removed; absent ones are ignored.
  std::vector<std::pair<std::string, std::string>> deletes;
  // Inserted, or replacing the record with the same (kernel, name).
  std::vector<VariantRecord> puts;
  // The registry revision after the batch.
  int64_t revision = 0;
};

// --- Claims (server/claims.h) ---------------------------------------------

// A launcher's claim on a device, as stored.
struct ClaimRecord {
  std::string id;
  std::string node;
  std::string device;
  std::string holder;
  int64_t expires_unix_ms = 0;
  std::string owner;
};

// One atomic change of the claims: the deletions, then the puts.
struct ClaimBatch {
  std::vector<std::string> deletes;  // claim ids; absent ones are ignored
  std::vector<ClaimRecord> puts;     // inserted or replacing the same id
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
  // RESOURCE_EXHAUSTED when the disk (or the store's size limit) is full.
  virtual absl::Status Apply(const StoreBatch& batch) = 0;

  // Writes a consistent copy of the whole store, as of one revision, to the
  // file `path` (created or overwritten), while Apply calls wait; the copy
  // is something this kind of store can be restored from. Errors as Apply's.
  virtual absl::StatusOr<StoreSummary> Backup(const std::string& path) = 0;

  // Where the data lives, for logs, e.g. "sqlite:/var/lib/ctxsel/ctxsel.db".
  virtual std::string Describe() const = 0;

  // Every stored claim (expired ones too: the ClaimBook judges), by id.
  virtual absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() = 0;
  // Applies `batch` atomically and durably, with Apply's guarantees.
  virtual absl::Status ApplyClaims(const ClaimBatch& batch) = 0;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_H_
