#include "formats/store_file.h"

#include <cerrno>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ctxsel {
namespace {

// The canonical code of a failed SQLite call: a full disk (or the
// max_bytes limit) is RESOURCE_EXHAUSTED, corruption DATA_LOSS, the rest
// INTERNAL.
absl::StatusCode CodeFor(sqlite3* db, int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_IOERR: {
      const int error = sqlite3_system_errno(db);
      return error == ENOSPC || error == EDQUOT
                 ? absl::StatusCode::kResourceExhausted
                 : absl::StatusCode::kInternal;
    }
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

// The detailed error, naming the file: for the server log and for errors
// at start, which only the operator sees.
absl::Status SqliteError(sqlite3* db, int rc, const std::string& path,
                         absl::string_view what) {
  return absl::Status(CodeFor(db, rc),
                      absl::StrCat("store ", path, ": ", what, ": ",
                                   sqlite3_errmsg(db), " (sqlite ", rc, ")"));
}

// Runs a one-row, one-column query and returns the value as text.
absl::StatusOr<std::string> QueryText(sqlite3* db, const std::string& path,
                                      const char* sql) {
  SqliteStatement statement(db, sql);
  if (!statement.ok()) return SqliteError(db, statement.rc(), path, sql);
  if (statement.Step() != SQLITE_ROW) {
    return SqliteError(db, statement.rc(), path, sql);
  }
  return statement.Text(0);
}

absl::StatusOr<int64_t> QueryInt(sqlite3* db, const std::string& path,
                                 const char* sql) {
  CTXSEL_ASSIGN_OR_RETURN(std::string text, QueryText(db, path, sql));
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::DataLossError(
        absl::StrCat("store ", path, ": ", sql, ": not a number: ", text));
  }
  return value;
}

absl::Status CheckIntegrity(sqlite3* db, const std::string& path) {
  CTXSEL_ASSIGN_OR_RETURN(std::string check,
                          QueryText(db, path, "PRAGMA integrity_check"));
  if (check != "ok") {
    return absl::DataLossError(
        absl::StrCat("store ", path, " is corrupt (integrity_check: ", check,
                     "); restore it from a backup or move it away"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> MissingTables(
    sqlite3* db, const std::string& path) {
  std::vector<std::string> missing;
  for (const char* table : kStoreTables) {
    constexpr char kSql[] =
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?";
    SqliteStatement statement(db, kSql);
    statement.Bind(1, std::string(table));
    if (!statement.ok() || statement.Step() != SQLITE_ROW) {
      return SqliteError(db, statement.rc(), path, kSql);
    }
    if (statement.Int(0) == 0) missing.push_back(table);
  }
  return missing;
}

absl::Status CheckSchemaVersion(sqlite3* db, const std::string& path) {
  CTXSEL_ASSIGN_OR_RETURN(
      std::string version,
      QueryText(db, path,
                "SELECT value FROM meta WHERE key = 'schema_version'"));
  if (version != std::to_string(kStoreSchemaVersion)) {
    return absl::DataLossError(
        absl::StrCat("store ", path, " has schema version ", version,
                     "; this server reads version ", kStoreSchemaVersion));
  }
  return absl::OkStatus();
}

absl::StatusOr<StoreSummary> ReadSummary(sqlite3* db, const std::string& path) {
  StoreSummary summary;
  CTXSEL_ASSIGN_OR_RETURN(
      int64_t revision,
      QueryInt(db, path, "SELECT value FROM meta WHERE key = 'revision'"));
  summary.revision = revision;
  CTXSEL_ASSIGN_OR_RETURN(int64_t variants,
                          QueryInt(db, path, "SELECT count(*) FROM variants"));
  summary.variant_count = variants;
  CTXSEL_ASSIGN_OR_RETURN(
      int64_t kernels,
      QueryInt(db, path, "SELECT count(DISTINCT kernel) FROM variants"));
  summary.kernel_count = kernels;
  return summary;
}

absl::StatusOr<StoreSummary> InspectStoreFile(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    return absl::NotFoundError(absl::StrCat("no store file ", path));
  }
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  absl::Status checked = rc != SQLITE_OK ? SqliteError(db, rc, path, "open")
                                         : CheckIntegrity(db, path);
  if (checked.ok()) {
    absl::StatusOr<std::vector<std::string>> missing = MissingTables(db, path);
    if (!missing.ok()) {
      checked = missing.status();
    } else if (!missing->empty()) {
      checked = absl::DataLossError(
          absl::StrCat("store ", path, " is not a ctxsel store (no table ",
                       missing->front(), ")"));
    }
  }
  if (checked.ok()) checked = CheckSchemaVersion(db, path);
  absl::StatusOr<StoreSummary> summary =
      checked.ok() ? ReadSummary(db, path) : checked;
  sqlite3_close(db);
  return summary;
}

}  // namespace ctxsel
