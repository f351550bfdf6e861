#include "server/store/sqlite_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "formats/store_file.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

// Claims (server/claims/claims.h); see the claims block at the end of this
// file.
constexpr char kClaimsSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS claims (
  id TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  device TEXT NOT NULL,
  holder TEXT NOT NULL,
  expires_unix_ms INTEGER NOT NULL,
  owner TEXT NOT NULL DEFAULT '',
  memory_bytes INTEGER NOT NULL DEFAULT 0,
  compute_percent INTEGER NOT NULL DEFAULT 0);
)sql";

// Operators' cordons (server/claims/cordons.h), kept until removed; like
// claims, not part of STATE: a store from before cordons gets the table.
constexpr char kCordonsSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS cordons (
  key TEXT PRIMARY KEY,
  device TEXT NOT NULL,
  node TEXT NOT NULL,
  reason TEXT NOT NULL,
  drain INTEGER NOT NULL,
  cordoned_by TEXT NOT NULL,
  unix_ms INTEGER NOT NULL);
)sql";

// What a client is told for each code of `SqliteError`: no file names,
// which are the server's business.
struct ClientMessage {
  absl::StatusCode code;
  const char* text;
  const char* reason;
};
constexpr ClientMessage kClientMessages[] = {
    {absl::StatusCode::kResourceExhausted, "the server's disk is full",
     kReasonStoreFull},
    {absl::StatusCode::kDataLoss, "the server's variant store is damaged",
     kReasonStoreDamaged},
};
constexpr ClientMessage kOtherClientMessage = {
    absl::StatusCode::kInternal, "the server's variant store failed",
    kReasonStoreFailed};

// Logs `detailed` and returns the same code with a message for the client:
// "the server's disk is full; the write was not applied (...)".
absl::Status ClientError(const absl::Status& detailed,
                         absl::string_view consequence) {
  spdlog::error("{}", std::string(detailed.message()));
  const ClientMessage* client = &kOtherClientMessage;
  for (const ClientMessage& message : kClientMessages) {
    if (message.code == detailed.code()) client = &message;
  }
  return WithErrorInfo(
      absl::Status(detailed.code(),
                   absl::StrCat(client->text, "; ", consequence,
                                " (details in the server "
                                "log)")),
      client->reason);
}

absl::Status Exec(sqlite3* db, const std::string& path, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, sql);
  return absl::OkStatus();
}

std::string InDir(const std::string& dir, absl::string_view name) {
  return (std::filesystem::path(dir) / std::string(name)).string();
}

// DATA_LOSS for a database that holds less than DIR/STATE says it did.
absl::Status Lost(const std::string& path, const std::string& dir,
                  absl::string_view found, const StoreState& state) {
  const std::string state_path = InDir(dir, kStateFileName);
  return absl::DataLossError(absl::StrCat(
      "store ", path, " ", found, ", but ", state_path, " records revision ",
      state.revision, " with ", state.variant_count,
      " variant(s): committed data is gone (database or its WAL deleted, "
      "emptied or damaged). Start with --data_dir of a backup (see "
      "docs/operations.md), or remove ",
      state_path, " to accept the loss"));
}

// Copies the backup `file` to `path` (= DIR/ctxsel.db), which must not
// exist yet, through a synced temporary file and a rename.
absl::Status RestoreInto(const std::string& file, const std::string& dir,
                         const std::string& path) {
  for (const std::string& taken :
       {path, path + "-wal", InDir(dir, kStateFileName)}) {
    if (std::filesystem::exists(taken)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--restore_from: data directory ", dir, " already holds a store (",
          taken, "); restore into a new --data_dir"));
    }
  }
  absl::StatusOr<StoreSummary> summary = InspectStoreFile(file);
  if (!summary.ok()) {
    return absl::Status(
        summary.status().code(),
        absl::StrCat("--restore_from: ", summary.status().message()));
  }
  const std::string tmp = path + ".restore";
  std::error_code error;
  // A stale copy, or a link planted in its place, goes; nothing is written
  // through it.
  std::filesystem::remove(tmp, error);
  std::filesystem::copy_file(file, tmp, error);
  const int fd =
      error ? -1 : open(tmp.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  // The copy has the backup's mode; the store is the server's alone.
  const bool synced = fd >= 0 && fchmod(fd, 0600) == 0 && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  if (error || !synced || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::filesystem::remove(tmp, error);
    return absl::InternalError(
        absl::StrCat("--restore_from: cannot copy ", file, " to ", path));
  }
  spdlog::info("restored revision {} ({} variant(s) of {} kernel(s)) from {}",
               summary->revision, summary->variant_count, summary->kernel_count,
               file);
  return absl::OkStatus();
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

// Below this much free space a start cannot count on writing the WAL
// index, the WAL or STATE: the store is opened read-only if it can be.
constexpr uint64_t kFullDiskBytes = 1 << 20;

bool IsDiskFull(const std::string& dir) {
  struct statvfs fs {};
  return statvfs(dir.c_str(), &fs) == 0 &&
         static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < kFullDiskBytes;
}

// `path` as the path of an SQLite URI ("file:PATH?...").
std::string UriPath(const std::string& path) {
  return absl::StrReplaceAll(path, {{"%", "%25"}, {"?", "%3f"}, {"#", "%23"}});
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    const std::string& data_dir, const SqliteStoreOptions& options) {
  CTXSEL_RETURN_IF_ERROR(PrepareDataDir(data_dir));
  CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<DataDirLock> lock,
                          DataDirLock::Acquire(data_dir));
  const std::string path = InDir(data_dir, kFileName);
  if (!options.restore_from.empty()) {
    CTXSEL_RETURN_IF_ERROR(RestoreInto(options.restore_from, data_dir, path));
  }
  CTXSEL_ASSIGN_OR_RETURN(std::optional<StoreState> state,
                          ReadStoreState(data_dir));
  // SQLite would create a missing file as a new, empty database.
  if (state && state->revision > 0 && !std::filesystem::exists(path)) {
    return Lost(path, data_dir, "does not exist", *state);
  }
  // Made (or tightened) 0600 before SQLite opens it: SQLite gives its WAL
  // and shared-memory files the database's mode.
  const int fd =
      open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || fchmod(fd, 0600) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(error)));
  }
  close(fd);
  std::unique_ptr<SqliteStore> store(
      new SqliteStore(std::move(lock), data_dir, path));
  absl::MutexLock hold(&store->mu_);
  store->state_ = state;
  const int rc = sqlite3_open_v2(
      path.c_str(), &store->db_,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
      nullptr);
  absl::Status opened = rc == SQLITE_OK
                            ? store->Init(options)
                            : SqliteError(store->db_, rc, path, "open");
  if (!opened.ok() && IsDiskFull(data_dir)) {
    CTXSEL_RETURN_IF_ERROR(store->OpenReadOnly(opened));
    return store;
  }
  CTXSEL_RETURN_IF_ERROR(opened);
  store->checked_ = true;
  return store;
}

SqliteStore::~SqliteStore() {
  absl::MutexLock lock(&mu_);
  if (checked_) {
    // A clean shutdown leaves ctxsel.db complete on its own, the WAL empty.
    const int rc = sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr,
                                nullptr, nullptr);
    if (rc != SQLITE_OK) {
      spdlog::warn("store {}: WAL checkpoint at close failed: {}", path_,
                   sqlite3_errmsg(db_));
    }
  } else if (db_ != nullptr) {
    // Leave a store that failed its checks as it was found: closing would
    // otherwise merge its WAL into the file and delete it.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  }
  sqlite3_close(db_);
}

absl::Status SqliteStore::Init(const SqliteStoreOptions& options) {
  sqlite3_busy_timeout(db_, 5000);
  // Check before writing anything: a damaged file must be reported as it is.
  CTXSEL_RETURN_IF_ERROR(CheckIntegrity(db_, path_));
  CTXSEL_ASSIGN_OR_RETURN(std::string mode,
                          QueryText(db_, path_, "PRAGMA journal_mode=WAL"));
  if (mode != "wal") {
    return absl::InternalError(
        absl::StrCat("store ", path_, ": cannot enable WAL (mode ", mode, ")"));
  }
  CTXSEL_RETURN_IF_ERROR(Exec(db_, path_, "PRAGMA synchronous=FULL"));
  CTXSEL_ASSIGN_OR_RETURN(std::vector<std::string> missing,
                          MissingTables(db_, path_));
  if (state_ && state_->revision > 0 && !missing.empty()) {
    return Lost(path_, dir_,
                missing.size() == std::size(kStoreTables)
                    ? "is empty"
                    : absl::StrCat("has no table ", missing.front()),
                *state_);
  }
  // Only a store that never held data gets its tables (re)created.
  if (!missing.empty()) {
    CTXSEL_RETURN_IF_ERROR(Exec(db_, path_, "BEGIN IMMEDIATE"));
    absl::Status created = Exec(db_, path_, kStoreSchema);
    if (created.ok()) created = Exec(db_, path_, "COMMIT");
    if (!created.ok()) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return created;
    }
  }
  CTXSEL_RETURN_IF_ERROR(CheckSchemaVersion(db_, path_));
  // Claims are short-lived and not part of STATE: a store from before
  // claims existed simply gets the table.
  CTXSEL_RETURN_IF_ERROR(Exec(db_, path_, kClaimsSchema));
  CTXSEL_RETURN_IF_ERROR(Exec(db_, path_, kCordonsSchema));
  // Claims from before owners existed belong to no one (only admins may
  // release them).
  if (!SqliteStatement(db_, "SELECT owner FROM claims LIMIT 0").ok()) {
    CTXSEL_RETURN_IF_ERROR(Exec(db_, path_,
                                "ALTER TABLE claims ADD COLUMN owner TEXT NOT "
                                "NULL DEFAULT ''"));
  }
  // Claims from before shares hold their whole device.
  if (!SqliteStatement(db_, "SELECT memory_bytes FROM claims LIMIT 0").ok()) {
    CTXSEL_RETURN_IF_ERROR(
        Exec(db_, path_,
             "ALTER TABLE claims ADD COLUMN memory_bytes INTEGER NOT NULL "
             "DEFAULT 0; ALTER TABLE claims ADD COLUMN compute_percent "
             "INTEGER NOT NULL DEFAULT 0"));
  }
  // Variants from before device images carry none (any device).
  if (!SqliteStatement(db_, "SELECT images FROM variants LIMIT 0").ok()) {
    CTXSEL_RETURN_IF_ERROR(Exec(db_, path_,
                                "ALTER TABLE variants ADD COLUMN images TEXT "
                                "NOT NULL DEFAULT '[]'"));
  }
  CTXSEL_ASSIGN_OR_RETURN(StoreSummary summary, ReadSummary(db_, path_));
  CTXSEL_RETURN_IF_ERROR(
      CheckAgainstState(summary.revision, summary.variant_count));
  const StoreState now = {summary.revision, summary.variant_count};
  if (!state_ || state_->revision != now.revision ||
      state_->variant_count != now.variant_count) {
    CTXSEL_RETURN_IF_ERROR(WriteStoreState(dir_, now));
    state_ = now;
  }
  if (options.max_bytes > 0) {
    CTXSEL_ASSIGN_OR_RETURN(int64_t page_size,
                            QueryInt(db_, path_, "PRAGMA page_size"));
    const std::string limit =
        absl::StrCat("PRAGMA max_page_count = ",
                     std::max<int64_t>(1, options.max_bytes / page_size));
    CTXSEL_RETURN_IF_ERROR(Exec(db_, path_, limit.c_str()));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::OpenReadOnly(const absl::Status& writable) {
  auto refused = [&](absl::string_view why) {
    return absl::Status(writable.code(),
                        absl::StrCat(writable.message(),
                                     "; not opened read-only either: ", why));
  };
  // Closed as found: a close would try to checkpoint.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_close(db_);
  db_ = nullptr;
  // Read without its WAL (immutable: no WAL index, no lock file), ctxsel.db
  // is the whole store only when the WAL holds no commit.
  std::error_code error;
  const uintmax_t wal = std::filesystem::file_size(path_ + "-wal", error);
  if (!error && wal > 0) {
    return refused("its WAL holds commits that only a writable open reads");
  }
  if (!state_.has_value() || state_->revision == 0) {
    return refused(absl::StrCat(kStateFileName, " records no data"));
  }
  const std::string uri = absl::StrCat("file:", UriPath(path_), "?immutable=1");
  const int rc = sqlite3_open_v2(
      uri.c_str(), &db_,
      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, path_, "open read-only");
  CTXSEL_RETURN_IF_ERROR(CheckIntegrity(db_, path_));
  CTXSEL_ASSIGN_OR_RETURN(std::vector<std::string> missing,
                          MissingTables(db_, path_));
  if (!missing.empty()) {
    return Lost(path_, dir_, absl::StrCat("has no table ", missing.front()),
                *state_);
  }
  CTXSEL_RETURN_IF_ERROR(CheckSchemaVersion(db_, path_));
  if (!SqliteStatement(db_, "SELECT owner FROM claims LIMIT 0").ok()) {
    return refused("it has no claims table yet");
  }
  if (!SqliteStatement(db_, "SELECT images FROM variants LIMIT 0").ok()) {
    return refused("its variants have no images column yet");
  }
  CTXSEL_ASSIGN_OR_RETURN(StoreSummary summary, ReadSummary(db_, path_));
  CTXSEL_RETURN_IF_ERROR(
      CheckAgainstState(summary.revision, summary.variant_count));
  read_only_ = true;
  spdlog::warn(
      "store {}: opened read-only at revision {}, the disk of {} being full "
      "({}): reads are served, writes answer RESOURCE_EXHAUSTED until the "
      "server is restarted with free space",
      path_, summary.revision, dir_, std::string(writable.message()));
  return absl::OkStatus();
}

absl::Status SqliteStore::RefuseReadOnly() const {
  return ClientError(absl::ResourceExhaustedError(absl::StrCat(
                         "store ", path_,
                         " is read-only: its disk was full when the server "
                         "started; free space and restart the server")),
                     "the write was not applied");
}

absl::Status SqliteStore::CheckAgainstState(int64_t revision,
                                            int64_t variant_count) {
  if (!state_ || state_->revision == 0) return absl::OkStatus();
  if (revision < state_->revision) {
    return Lost(path_, dir_, absl::StrCat("holds revision ", revision),
                *state_);
  }
  // At the same revision the contents must be the same; behind a newer
  // revision STATE merely lags (a crash between commit and STATE update).
  if (revision == state_->revision && variant_count != state_->variant_count) {
    return Lost(path_, dir_,
                absl::StrCat("holds ", variant_count,
                             " variant(s) at revision ", revision),
                *state_);
  }
  return absl::OkStatus();
}

absl::StatusOr<StoreContents> SqliteStore::Load() {
  absl::MutexLock lock(&mu_);
  StoreContents contents;
  CTXSEL_ASSIGN_OR_RETURN(
      std::string revision,
      QueryText(db_, path_, "SELECT value FROM meta WHERE key = 'revision'"));
  contents.revision = std::stoll(revision);
  constexpr char kSelect[] =
      "SELECT kernel, name, selector, ord, revision, adjust_args, "
      "append_args, source_file, source_line, images FROM variants "
      "ORDER BY kernel, ord";
  SqliteStatement statement(db_, kSelect);
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
    auto images = FromJson(statement.Text(9));
    for (const auto* list : {&adjust, &append, &images}) {
      if (!list->ok()) {
        return absl::DataLossError(
            absl::StrCat("store ", path_, ": variant ", record.kernel, "/",
                         record.name, ": ", list->status().message()));
      }
    }
    record.metadata.images = *std::move(images);
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

absl::StatusOr<int64_t> SqliteStore::Apply(const StoreBatch& batch) {
  absl::MutexLock lock(&mu_);
  if (read_only_) return RefuseReadOnly();
  absl::Status applied = Exec(db_, path_, "BEGIN IMMEDIATE");
  if (!applied.ok()) return ClientError(applied, "the write was not applied");
  applied = ApplyLocked(batch);
  absl::StatusOr<int64_t> count =
      applied.ok() ? QueryInt(db_, path_, "SELECT count(*) FROM variants")
                   : applied;
  if (count.ok()) applied = Exec(db_, path_, "COMMIT");
  if (!count.ok() || !applied.ok()) {
    // Harmless when SQLite already rolled back on its own.
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return ClientError(count.ok() ? applied : count.status(),
                       "the write was not applied");
  }
  // After the commit, so STATE is never ahead of the database. If it cannot
  // be written it lags, which is safe: the next write or start renews it.
  const StoreState now = {batch.revision, *count};
  if (absl::Status s = WriteStoreState(dir_, now); !s.ok()) {
    spdlog::warn("store {}: {}", path_, std::string(s.message()));
  } else {
    state_ = now;
  }
  return batch.revision;
}

absl::StatusOr<StoreSummary> SqliteStore::Backup(const std::string& path) {
  sqlite3* copy = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &copy,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  absl::Status copied =
      rc == SQLITE_OK ? absl::OkStatus() : SqliteError(copy, rc, path, "open");
  if (copied.ok()) {
    absl::MutexLock lock(&mu_);
    sqlite3_backup* backup = sqlite3_backup_init(copy, "main", db_, "main");
    if (backup == nullptr) {
      copied = SqliteError(copy, sqlite3_errcode(copy), path, "backup");
    } else {
      rc = sqlite3_backup_step(backup, -1);
      const int finished = sqlite3_backup_finish(backup);
      if (rc != SQLITE_DONE || finished != SQLITE_OK) {
        copied = SqliteError(copy, rc != SQLITE_DONE ? rc : finished, path,
                             "backup");
      }
    }
  }
  // The copy is one self-contained file, readable without its WAL.
  if (copied.ok()) {
    absl::StatusOr<std::string> mode =
        QueryText(copy, path, "PRAGMA journal_mode=DELETE");
    if (!mode.ok()) copied = mode.status();
  }
  sqlite3_close(copy);
  if (!copied.ok()) return ClientError(copied, "no backup was made");
  absl::StatusOr<StoreSummary> summary = InspectStoreFile(path);
  if (!summary.ok()) {
    return ClientError(summary.status(), "no backup was made");
  }
  return summary;
}

absl::Status SqliteStore::ApplyLocked(const StoreBatch& batch) {
  auto run = [&](SqliteStatement& statement, const char* sql) -> absl::Status {
    if (!statement.ok() || statement.Step() != SQLITE_DONE) {
      return SqliteError(db_, statement.rc(), path_, sql);
    }
    return absl::OkStatus();
  };
  for (const std::string& kernel : batch.clear_kernels) {
    constexpr char kSql[] = "DELETE FROM variants WHERE kernel = ?";
    SqliteStatement statement(db_, kSql);
    statement.Bind(1, kernel);
    CTXSEL_RETURN_IF_ERROR(run(statement, kSql));
  }
  for (const auto& [kernel, name] : batch.deletes) {
    constexpr char kSql[] =
        "DELETE FROM variants WHERE kernel = ? AND name = ?";
    SqliteStatement statement(db_, kSql);
    statement.Bind(1, kernel).Bind(2, name);
    CTXSEL_RETURN_IF_ERROR(run(statement, kSql));
  }
  for (const VariantRecord& record : batch.puts) {
    constexpr char kSql[] =
        "INSERT OR REPLACE INTO variants (kernel, name, selector, ord, "
        "revision, adjust_args, append_args, source_file, source_line, "
        "images) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    SqliteStatement statement(db_, kSql);
    statement.Bind(1, record.kernel)
        .Bind(2, record.name)
        .Bind(3, record.selector_text)
        .Bind(4, record.order)
        .Bind(5, record.revision)
        .Bind(6, ToJson(record.metadata.adjust_args))
        .Bind(7, ToJson(record.metadata.append_args))
        .Bind(8, record.metadata.source_file)
        .Bind(9, static_cast<int64_t>(record.metadata.source_line))
        .Bind(10, ToJson(record.metadata.images));
    CTXSEL_RETURN_IF_ERROR(run(statement, kSql));
  }
  constexpr char kSql[] = "UPDATE meta SET value = ? WHERE key = 'revision'";
  SqliteStatement statement(db_, kSql);
  statement.Bind(1, batch.revision);
  return run(statement, kSql);
}

// --- Claims ----------------------------------------------------------------

absl::StatusOr<std::vector<ClaimRecord>> SqliteStore::LoadClaims() {
  absl::MutexLock lock(&mu_);
  constexpr char kSelect[] =
      "SELECT id, node, device, holder, expires_unix_ms, owner, memory_bytes, "
      "compute_percent FROM claims ORDER BY id";
  SqliteStatement statement(db_, kSelect);
  if (!statement.ok()) return SqliteError(db_, statement.rc(), path_, kSelect);
  std::vector<ClaimRecord> claims;
  while (statement.Step() == SQLITE_ROW) {
    ClaimRecord claim;
    claim.id = statement.Text(0);
    claim.node = statement.Text(1);
    claim.device = statement.Text(2);
    claim.holder = statement.Text(3);
    claim.expires_unix_ms = statement.Int(4);
    claim.owner = statement.Text(5);
    claim.memory_bytes = static_cast<uint64_t>(statement.Int(6));
    claim.compute_percent = static_cast<int32_t>(statement.Int(7));
    claims.push_back(std::move(claim));
  }
  if (statement.rc() != SQLITE_DONE) {
    return SqliteError(db_, statement.rc(), path_, kSelect);
  }
  return claims;
}

absl::Status SqliteStore::ApplyClaims(const ClaimBatch& batch) {
  absl::MutexLock lock(&mu_);
  if (read_only_) return RefuseReadOnly();
  CTXSEL_RETURN_IF_ERROR(Exec(db_, path_, "BEGIN IMMEDIATE"));
  auto run = [&](SqliteStatement& statement, const char* sql) -> absl::Status {
    if (!statement.ok() || statement.Step() != SQLITE_DONE) {
      return SqliteError(db_, statement.rc(), path_, sql);
    }
    return absl::OkStatus();
  };
  absl::Status applied;
  // One writer: an expired claim is nobody else's to renew.
  std::vector<std::string> ended = batch.deletes;
  ended.insert(ended.end(), batch.expired.begin(), batch.expired.end());
  for (const std::string& id : ended) {
    if (!applied.ok()) break;
    constexpr char kSql[] = "DELETE FROM claims WHERE id = ?";
    SqliteStatement statement(db_, kSql);
    statement.Bind(1, id);
    applied = run(statement, kSql);
  }
  for (const ClaimRecord& claim : batch.puts) {
    if (!applied.ok()) break;
    constexpr char kSql[] =
        "INSERT OR REPLACE INTO claims (id, node, device, holder, "
        "expires_unix_ms, owner, memory_bytes, compute_percent) VALUES (?, ?, "
        "?, ?, ?, ?, ?, ?)";
    SqliteStatement statement(db_, kSql);
    statement.Bind(1, claim.id)
        .Bind(2, claim.node)
        .Bind(3, claim.device)
        .Bind(4, claim.holder)
        .Bind(5, claim.expires_unix_ms)
        .Bind(6, claim.owner)
        .Bind(7, static_cast<int64_t>(claim.memory_bytes))
        .Bind(8, static_cast<int64_t>(claim.compute_percent));
    applied = run(statement, kSql);
  }
  if (applied.ok()) applied = Exec(db_, path_, "COMMIT");
  if (!applied.ok()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return applied;
}

// --- Cordons ---------------------------------------------------------------

absl::StatusOr<std::vector<Cordon>> SqliteStore::LoadCordons() {
  absl::MutexLock lock(&mu_);
  constexpr char kSelect[] =
      "SELECT device, node, reason, drain, cordoned_by, unix_ms FROM cordons "
      "ORDER BY key";
  SqliteStatement statement(db_, kSelect);
  if (!statement.ok()) return SqliteError(db_, statement.rc(), path_, kSelect);
  std::vector<Cordon> cordons;
  while (statement.Step() == SQLITE_ROW) {
    Cordon cordon;
    cordon.device = statement.Text(0);
    cordon.node = statement.Text(1);
    cordon.reason = statement.Text(2);
    cordon.drain = statement.Int(3) != 0;
    cordon.by = statement.Text(4);
    cordon.unix_ms = statement.Int(5);
    cordons.push_back(std::move(cordon));
  }
  if (statement.rc() != SQLITE_DONE) {
    return SqliteError(db_, statement.rc(), path_, kSelect);
  }
  return cordons;
}

absl::Status SqliteStore::PutCordon(const Cordon& cordon) {
  absl::MutexLock lock(&mu_);
  constexpr char kSql[] =
      "INSERT OR REPLACE INTO cordons (key, device, node, reason, drain, "
      "cordoned_by, unix_ms) VALUES (?, ?, ?, ?, ?, ?, ?)";
  SqliteStatement statement(db_, kSql);
  statement.Bind(1, cordon.Key())
      .Bind(2, cordon.device)
      .Bind(3, cordon.node)
      .Bind(4, cordon.reason)
      .Bind(5, int64_t{cordon.drain ? 1 : 0})
      .Bind(6, cordon.by)
      .Bind(7, cordon.unix_ms);
  if (!statement.ok() || statement.Step() != SQLITE_DONE) {
    return SqliteError(db_, statement.rc(), path_, kSql);
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::DeleteCordon(const std::string& key) {
  absl::MutexLock lock(&mu_);
  constexpr char kSql[] = "DELETE FROM cordons WHERE key = ?";
  SqliteStatement statement(db_, kSql);
  statement.Bind(1, key);
  if (!statement.ok() || statement.Step() != SQLITE_DONE) {
    return SqliteError(db_, statement.rc(), path_, kSql);
  }
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("no cordon on ", key));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
