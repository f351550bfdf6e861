// sqlite_store.h: the embedded default Store, one SQLite file in --data_dir.
//
// Why SQLite rather than a hand-written log: it gives atomic multi-row
// transactions, crash safety and corruption detection that are already
// tested to death, and one file that operators can inspect with `sqlite3`.
// The database runs in WAL mode with synchronous=FULL, so a committed
// transaction is on disk (WAL fsync'd) before Apply() returns.
//
// The store never silently loses data (docs/operations.md, "Store"):
//   * One store per directory: Open() flock()s DIR/LOCK for the store's
//     life; a second Open() of the directory, from any process, fails with
//     FAILED_PRECONDITION naming the holder's pid.
//   * DIR/STATE (server/store/data_dir.h) records the revision and variant
//   count
//     after each commit, written after the commit so it is never ahead of
//     the database. A store whose STATE says it held data opens only if
//     ctxsel.db still holds that revision: a deleted, emptied or rolled-back
//     file, a dropped table, a deleted or damaged WAL is a DataLossError
//     naming the file and the way out.
//   * A file that is not a database, a truncated or damaged one (`PRAGMA
//     integrity_check`), or one written by an unknown schema version is a
//     DataLossError naming the file; nothing is dropped or recreated.
//   * Destroying the store checkpoints the WAL into ctxsel.db (TRUNCATE).
//   * A start on a full disk (under 1 MiB free), which cannot write the WAL
//     index, the WAL or STATE, opens the store read-only when ctxsel.db is
//     the whole store (its WAL holds no commit: it was closed cleanly) and
//     passes the same checks against STATE: reads are served, and every
//     write answers RESOURCE_EXHAUSTED ("the server's disk is full") until a
//     restart with free space. Otherwise the start fails as before.
//
//   absl::StatusOr<std::unique_ptr<SqliteStore>> store =
//       SqliteStore::Open("/var/lib/ctxsel");
//   if (!store.ok()) { spdlog::error("{}", store.status()); return 1; }
#ifndef CTXSEL_SERVER_STORE_SQLITE_STORE_H_
#define CTXSEL_SERVER_STORE_SQLITE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/data_dir.h"
#include "server/store/store.h"

struct sqlite3;

namespace ctxsel::server {

struct SqliteStoreOptions {
  // Largest size of ctxsel.db in bytes (SQLite's max_page_count); a write
  // that would pass it fails like a full disk. 0: no limit but the disk.
  // Rounded down to whole pages, and never below the current size.
  int64_t max_bytes = 0;
  // A backup file (from Backup() or `ctxsel-cli admin backup`) to restore
  // into the data directory before opening it. The directory must not hold
  // a store yet (no ctxsel.db, WAL or STATE): FailedPreconditionError.
  std::string restore_from;
};

class SqliteStore final : public Store {
 public:
  // The database file inside the data directory.
  static constexpr char kFileName[] = "ctxsel.db";

  // Opens (creating if needed) `data_dir`/ctxsel.db, locks the directory and
  // checks the database against DIR/STATE.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      const std::string& data_dir, const SqliteStoreOptions& options = {});

  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  absl::StatusOr<StoreContents> Load() override;
  absl::StatusOr<int64_t> Apply(const StoreBatch& batch) override;
  // Uses SQLite's online backup API; the copy is in rollback-journal mode,
  // a single self-contained file.
  absl::StatusOr<StoreSummary> Backup(const std::string& path) override;
  std::string Describe() const override { return "sqlite:" + path_; }

  // Claims: their own table, created when missing (no schema version
  // change: older stores simply have no claims).
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override;
  absl::Status ApplyClaims(const ClaimBatch& batch) override;
  absl::StatusOr<std::vector<Cordon>> LoadCordons() override;
  absl::Status PutCordon(const Cordon& cordon) override;
  absl::Status DeleteCordon(const std::string& key) override;

 private:
  SqliteStore(std::unique_ptr<DataDirLock> lock, std::string dir,
              std::string path)
      : lock_(std::move(lock)), dir_(std::move(dir)), path_(std::move(path)) {}
  absl::Status Init(const SqliteStoreOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckAgainstState(int64_t revision, int64_t variant_count)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ApplyLocked(const StoreBatch& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After Init() failed with `writable` on a full disk: reopens ctxsel.db
  // read-only if it is the whole store and matches STATE; `writable` with
  // the reason otherwise.
  absl::Status OpenReadOnly(const absl::Status& writable)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What a write to a read-only store answers.
  absl::Status RefuseReadOnly() const;

  // Released after the database is closed (members die after the body of
  // the destructor has run).
  const std::unique_ptr<DataDirLock> lock_;
  const std::string dir_;
  const std::string path_;
  absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_) = nullptr;
  // DIR/STATE as last read or written.
  std::optional<StoreState> state_ ABSL_GUARDED_BY(mu_);
  // Open() found the store sound; only then is the WAL merged at close.
  bool checked_ ABSL_GUARDED_BY(mu_) = false;
  // Opened by OpenReadOnly(): every write is refused.
  bool read_only_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_SQLITE_STORE_H_
