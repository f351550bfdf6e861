#include "server/sqlite_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace ctxsel::server {
namespace {

constexpr int64_t kSchemaVersion = 1;

constexpr char kSchema[] = R"sql(
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
  PRIMARY KEY (kernel, name));
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', 1);
INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', 0);
)sql";

// Claims (server/claims.h); see the claims block at the end of this file.
constexpr char kClaimsSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS claims (
  id TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  device TEXT NOT NULL,
  holder TEXT NOT NULL,
  expires_unix_ms INTEGER NOT NULL);
)sql";

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }
  Statement& Bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int i, int64_t value) {
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

// Corruption and "not a database" are data loss; anything else is internal.
absl::Status SqliteError(sqlite3* db, int rc, const std::string& path,
                         absl::string_view what) {
  const std::string message =
      absl::StrCat("store ", path, ": ", what, ": ", sqlite3_errmsg(db),
                   " (sqlite ", rc, ")");
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    return absl::DataLossError(message);
  }
  return absl::InternalError(message);
}

absl::Status Exec(sqlite3* db, const std::string& path, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, sql);
  return absl::OkStatus();
}

// Runs a one-row, one-column query and returns the value as text.
absl::StatusOr<std::string> QueryText(sqlite3* db, const std::string& path,
                                      const char* sql) {
  Statement statement(db, sql);
  if (!statement.ok()) return SqliteError(db, statement.rc(), path, sql);
  if (statement.Step() != SQLITE_ROW) {
    return SqliteError(db, statement.rc(), path, sql);
  }
  return statement.Text(0);
}

std::string ToJson(const std::vector<std::string>& list) {
  return nlohmann::json(list).dump();
}

absl::StatusOr<std::vector<std::string>> FromJson(const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    return absl::DataLossError(absl::StrCat("malformed list '", text, "'"));
  }
  std::vector<std::string> list;
  for (const nlohmann::json& item : parsed) {
    if (!item.is_string()) {
      return absl::DataLossError(absl::StrCat("malformed list '", text, "'"));
    }
    list.push_back(item.get<std::string>());
  }
  return list;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    const std::string& data_dir) {
  std::error_code error;
  std::filesystem::create_directories(data_dir, error);
  if (error) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create --data_dir ", data_dir, ": ", error.message()));
  }
  const std::string path =
      (std::filesystem::path(data_dir) / kFileName).string();
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, path));
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, "open");
  absl::Status init = store->Init();
  if (!init.ok()) return init;
  return store;
}

SqliteStore::~SqliteStore() {
  absl::MutexLock lock(&mu_);
  sqlite3_close(db_);
}

absl::Status SqliteStore::Init() {
  absl::MutexLock lock(&mu_);
  sqlite3_busy_timeout(db_, 5000);
  // Check before writing anything: a damaged file must be reported as it is.
  absl::StatusOr<std::string> check =
      QueryText(db_, path_, "PRAGMA integrity_check");
  if (!check.ok()) return check.status();
  if (*check != "ok") {
    return absl::DataLossError(
        absl::StrCat("store ", path_, " is corrupt (integrity_check: ", *check,
                     "); restore it from a backup or move it away"));
  }
  absl::StatusOr<std::string> mode =
      QueryText(db_, path_, "PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  if (*mode != "wal") {
    return absl::InternalError(absl::StrCat(
        "store ", path_, ": cannot enable WAL (mode ", *mode, ")"));
  }
  if (absl::Status s = Exec(db_, path_, "PRAGMA synchronous=FULL"); !s.ok()) {
    return s;
  }
  if (absl::Status s = Exec(db_, path_, kSchema); !s.ok()) return s;
  if (absl::Status s = Exec(db_, path_, kClaimsSchema); !s.ok()) return s;
  absl::StatusOr<std::string> version = QueryText(
      db_, path_, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.ok()) return version.status();
  if (*version != std::to_string(kSchemaVersion)) {
    return absl::DataLossError(
        absl::StrCat("store ", path_, " has schema version ", *version,
                     "; this server reads version ", kSchemaVersion));
  }
  return absl::OkStatus();
}

absl::StatusOr<StoreContents> SqliteStore::Load() {
  absl::MutexLock lock(&mu_);
  StoreContents contents;
  absl::StatusOr<std::string> revision =
      QueryText(db_, path_, "SELECT value FROM meta WHERE key = 'revision'");
  if (!revision.ok()) return revision.status();
  contents.revision = std::stoll(*revision);
  constexpr char kSelect[] =
      "SELECT kernel, name, selector, ord, revision, adjust_args, "
      "append_args, source_file, source_line FROM variants "
      "ORDER BY kernel, ord";
  Statement statement(db_, kSelect);
  if (!statement.ok()) return SqliteError(db_, statement.rc(), path_, kSelect);
  while (statement.Step() == SQLITE_ROW) {
    VariantRecord record;
    record.kernel = statement.Text(0);
    record.name = statement.Text(1);
    record.selector_text = statement.Text(2);
    record.order = statement.Int(3);
    record.revision = statement.Int(4);
    auto adjust = FromJson(statement.Text(5));
    auto append = FromJson(statement.Text(6));
    if (!adjust.ok() || !append.ok()) {
      return absl::DataLossError(absl::StrCat(
          "store ", path_, ": variant ", record.kernel, "/", record.name, ": ",
          (adjust.ok() ? append : adjust).status().message()));
    }
    record.metadata.adjust_args = *std::move(adjust);
    record.metadata.append_args = *std::move(append);
    record.metadata.source_file = statement.Text(7);
    record.metadata.source_line = static_cast<int>(statement.Int(8));
    contents.variants.push_back(std::move(record));
  }
  if (statement.rc() != SQLITE_DONE) {
    return SqliteError(db_, statement.rc(), path_, kSelect);
  }
  return contents;
}

absl::Status SqliteStore::Apply(const StoreBatch& batch) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Exec(db_, path_, "BEGIN IMMEDIATE"); !s.ok()) return s;
  absl::Status applied = ApplyLocked(batch);
  if (applied.ok()) applied = Exec(db_, path_, "COMMIT");
  if (!applied.ok()) {
    // Harmless when SQLite already rolled back on its own.
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  return applied;
}

absl::Status SqliteStore::ApplyLocked(const StoreBatch& batch) {
  auto run = [&](Statement& statement, const char* sql) -> absl::Status {
    if (!statement.ok() || statement.Step() != SQLITE_DONE) {
      return SqliteError(db_, statement.rc(), path_, sql);
    }
    return absl::OkStatus();
  };
  for (const std::string& kernel : batch.clear_kernels) {
    constexpr char kSql[] = "DELETE FROM variants WHERE kernel = ?";
    Statement statement(db_, kSql);
    statement.Bind(1, kernel);
    if (absl::Status s = run(statement, kSql); !s.ok()) return s;
  }
  for (const auto& [kernel, name] : batch.deletes) {
    constexpr char kSql[] =
        "DELETE FROM variants WHERE kernel = ? AND name = ?";
    Statement statement(db_, kSql);
    statement.Bind(1, kernel).Bind(2, name);
    if (absl::Status s = run(statement, kSql); !s.ok()) return s;
  }
  for (const VariantRecord& record : batch.puts) {
    constexpr char kSql[] =
        "INSERT OR REPLACE INTO variants (kernel, name, selector, ord, "
        "revision, adjust_args, append_args, source_file, source_line) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    Statement statement(db_, kSql);
    statement.Bind(1, record.kernel)
        .Bind(2, record.name)
        .Bind(3, record.selector_text)
        .Bind(4, record.order)
        .Bind(5, record.revision)
        .Bind(6, ToJson(record.metadata.adjust_args))
        .Bind(7, ToJson(record.metadata.append_args))
        .Bind(8, record.metadata.source_file)
        .Bind(9, static_cast<int64_t>(record.metadata.source_line));
    if (absl::Status s = run(statement, kSql); !s.ok()) return s;
  }
  constexpr char kSql[] = "UPDATE meta SET value = ? WHERE key = 'revision'";
  Statement statement(db_, kSql);
  statement.Bind(1, batch.revision);
  return run(statement, kSql);
}

// --- Claims ----------------------------------------------------------------

absl::StatusOr<std::vector<ClaimRecord>> SqliteStore::LoadClaims() {
  absl::MutexLock lock(&mu_);
  constexpr char kSelect[] =
      "SELECT id, node, device, holder, expires_unix_ms FROM claims "
      "ORDER BY id";
  Statement statement(db_, kSelect);
  if (!statement.ok()) return SqliteError(db_, statement.rc(), path_, kSelect);
  std::vector<ClaimRecord> claims;
  while (statement.Step() == SQLITE_ROW) {
    ClaimRecord claim;
    claim.id = statement.Text(0);
    claim.node = statement.Text(1);
    claim.device = statement.Text(2);
    claim.holder = statement.Text(3);
    claim.expires_unix_ms = statement.Int(4);
    claims.push_back(std::move(claim));
  }
  if (statement.rc() != SQLITE_DONE) {
    return SqliteError(db_, statement.rc(), path_, kSelect);
  }
  return claims;
}

absl::Status SqliteStore::ApplyClaims(const ClaimBatch& batch) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Exec(db_, path_, "BEGIN IMMEDIATE"); !s.ok()) return s;
  auto run = [&](Statement& statement, const char* sql) -> absl::Status {
    if (!statement.ok() || statement.Step() != SQLITE_DONE) {
      return SqliteError(db_, statement.rc(), path_, sql);
    }
    return absl::OkStatus();
  };
  absl::Status applied;
  for (const std::string& id : batch.deletes) {
    if (!applied.ok()) break;
    constexpr char kSql[] = "DELETE FROM claims WHERE id = ?";
    Statement statement(db_, kSql);
    statement.Bind(1, id);
    applied = run(statement, kSql);
  }
  for (const ClaimRecord& claim : batch.puts) {
    if (!applied.ok()) break;
    constexpr char kSql[] =
        "INSERT OR REPLACE INTO claims (id, node, device, holder, "
        "expires_unix_ms) VALUES (?, ?, ?, ?, ?)";
    Statement statement(db_, kSql);
    statement.Bind(1, claim.id)
        .Bind(2, claim.node)
        .Bind(3, claim.device)
        .Bind(4, claim.holder)
        .Bind(5, claim.expires_unix_ms);
    applied = run(statement, kSql);
  }
  if (applied.ok()) applied = Exec(db_, path_, "COMMIT");
  if (!applied.ok()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return applied;
}

}  // namespace ctxsel::server
