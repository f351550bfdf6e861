// sqlite_store.h: the embedded default Store, one SQLite file in --data_dir.
//
// Why SQLite rather than a hand-written log: it gives atomic multi-row
// transactions, crash safety and corruption detection that are already
// tested to death, and one file that operators can inspect with `sqlite3`.
// The database runs in WAL mode with synchronous=FULL, so a committed
// transaction is on disk (WAL fsync'd) before Apply() returns.
//
// Open() refuses a store it cannot trust: a file that is not a database, a
// truncated or damaged one (`PRAGMA integrity_check`), or one written by an
// unknown schema version is a DataLossError naming the file; nothing is ever
// dropped or recreated silently.
//
//   absl::StatusOr<std::unique_ptr<SqliteStore>> store =
//       SqliteStore::Open("/var/lib/ctxsel");
//   if (!store.ok()) { spdlog::error("{}", store.status()); return 1; }
#ifndef CTXSEL_SERVER_SQLITE_STORE_H_
#define CTXSEL_SERVER_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store.h"

struct sqlite3;

namespace ctxsel::server {

class SqliteStore final : public Store {
 public:
  // The database file inside the data directory.
  static constexpr char kFileName[] = "ctxsel.db";

  // Opens (creating if needed) `data_dir`/ctxsel.db and checks it.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      const std::string& data_dir);

  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  absl::StatusOr<StoreContents> Load() override;
  absl::Status Apply(const StoreBatch& batch) override;
  std::string Describe() const override { return "sqlite:" + path_; }

  // Claims: their own table, created when missing (no schema version
  // change: older stores simply have no claims).
  absl::StatusOr<std::vector<ClaimRecord>> LoadClaims() override;
  absl::Status ApplyClaims(const ClaimBatch& batch) override;

 private:
  SqliteStore(sqlite3* db, std::string path)
      : db_(db), path_(std::move(path)) {}
  absl::Status Init();
  absl::Status ApplyLocked(const StoreBatch& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  const std::string path_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_SQLITE_STORE_H_
