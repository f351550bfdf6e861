// ctxsel-cli admin backup FILE: an online backup of the server's variant
// store (docs/operations.md, "Backup and restore").
//
// The copy streams into FILE.tmp-PID beside FILE, is checked (an intact
// store holding what the server announced), synced, then renamed to FILE:
// FILE is either the previous file or a complete, checked backup.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "client/cli/service_output.h"
#include "server/sqlite_store.h"

namespace ctxsel::cli {
namespace {

// Streams the backup into `tmp` and checks it; returns what it holds.
absl::StatusOr<v1::BackupSummary> FetchAndCheck(const std::string& tmp) {
  absl::StatusOr<v1::BackupSummary> summary;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.is_open()) {
      return absl::FailedPreconditionError(absl::StrCat("cannot create ", tmp));
    }
    summary = ConnectToServer()->Backup(out);
    if (summary.ok() && !out.flush()) {
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
  }
  if (!summary.ok()) return summary;
  absl::StatusOr<server::StoreSummary> inspected =
      server::SqliteStore::Inspect(tmp);
  if (!inspected.ok()) return inspected.status();
  if (inspected->revision != summary->revision() ||
      inspected->variant_count != summary->variant_count()) {
    return absl::DataLossError(absl::StrCat(
        "the copy holds revision ", inspected->revision, " with ",
        inspected->variant_count, " variant(s); the server announced revision ",
        summary->revision(), " with ", summary->variant_count()));
  }
  const int fd = open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  if (!synced) return absl::InternalError(absl::StrCat("cannot sync ", tmp));
  return summary;
}

int RunBackup(const std::string& file) {
  const std::string tmp = absl::StrCat(file, ".tmp-", getpid());
  absl::StatusOr<v1::BackupSummary> summary = FetchAndCheck(tmp);
  if (summary.ok() && std::rename(tmp.c_str(), file.c_str()) != 0) {
    summary = absl::FailedPreconditionError(
        absl::StrCat("cannot rename ", tmp, " to ", file));
  }
  if (!summary.ok()) {
    std::remove(tmp.c_str());
    return ReportError("admin backup " + file, summary.status());
  }
  std::printf(
      "backed up revision %lld of %s: %lld variant(s) of %lld kernel(s), "
      "%lld bytes, to %s\n",
      static_cast<long long>(summary->revision()), ServerAddress().c_str(),
      static_cast<long long>(summary->variant_count()),
      static_cast<long long>(summary->kernel_count()),
      static_cast<long long>(summary->size_bytes()), file.c_str());
  return kExitOk;
}

int RunAdmin(const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "backup") return RunBackup(args[1]);
  return UsageError(kAdminCommand);
}

}  // namespace

const Command kAdminCommand = {
    "admin", "admin backup FILE",
    "Copy the server's variant store to FILE while it serves (operations.md).",
    RunAdmin};

}  // namespace ctxsel::cli
