// store_file.h: the SQLite file that holds a server's variants
// (DATA_DIR/ctxsel.db, and every backup of it): its schema, and the
// read-only checks that both the server (at start and restore) and
// `ctxsel-cli admin backup` (on the copy it received) run.
//
//   absl::StatusOr<StoreSummary> summary = InspectStoreFile("backup.db");
//   // summary->revision, variant_count, kernel_count; DATA_LOSS when the
//   // file is not an intact ctxsel store of a known schema version.
#ifndef CTXSEL_FORMATS_STORE_FILE_H_
#define CTXSEL_FORMATS_STORE_FILE_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel {

// What a store (or a backup of one) holds, in numbers.
struct StoreSummary {
  int64_t revision = 0;
  int64_t variant_count = 0;
  int64_t kernel_count = 0;
};

// The schema version this build reads and writes (meta.schema_version).
inline constexpr int64_t kStoreSchemaVersion = 1;

// The variants' tables; creating them is idempotent.
inline constexpr char kStoreSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS variants (
  kernel TEXT NOT NULL,
  name TEXT NOT NULL,
  selector TEXT NOT NULL,
  ord INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  adjust_args TEXT NOT NULL,
  append_args TEXT NOT NULL,
  source_file TEXT NOT NULL,
  source_line INTEGER NOT NULL,
  images TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (kernel, name));
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', 1);
INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', 0);
)sql";

// The tables kStoreSchema creates.
inline constexpr const char* kStoreTables[] = {"meta", "variants"};

// Reads the store file `path` without changing it: NotFoundError when there
// is no such file, DataLossError naming it when it is not an intact store
// of kStoreSchemaVersion.
absl::StatusOr<StoreSummary> InspectStoreFile(const std::string& path);

// --- SQLite helpers the store and the checks share ---

// A prepared statement that finalizes itself.
class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }
  SqliteStatement& Bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  SqliteStatement& Bind(int i, int64_t value) {
    sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return rc_ = sqlite3_step(stmt_); }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text == nullptr ? std::string()
                           : std::string(reinterpret_cast<const char*>(text));
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  int rc() const { return rc_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

// The detailed error of a failed SQLite call, naming the file: a full disk
// is RESOURCE_EXHAUSTED, corruption DATA_LOSS, the rest INTERNAL.
absl::Status SqliteError(sqlite3* db, int rc, const std::string& path,
                         absl::string_view what);

// A one-row, one-column query's value as text / as an integer.
absl::StatusOr<std::string> QueryText(sqlite3* db, const std::string& path,
                                      const char* sql);
absl::StatusOr<int64_t> QueryInt(sqlite3* db, const std::string& path,
                                 const char* sql);

// DATA_LOSS unless PRAGMA integrity_check says "ok".
absl::Status CheckIntegrity(sqlite3* db, const std::string& path);

// The tables of kStoreSchema that the database lacks.
absl::StatusOr<std::vector<std::string>> MissingTables(sqlite3* db,
                                                       const std::string& path);

// DATA_LOSS unless meta.schema_version is kStoreSchemaVersion.
absl::Status CheckSchemaVersion(sqlite3* db, const std::string& path);

// The revision and counts of an open store.
absl::StatusOr<StoreSummary> ReadSummary(sqlite3* db, const std::string& path);

}  // namespace ctxsel

#endif  // CTXSEL_FORMATS_STORE_FILE_H_
