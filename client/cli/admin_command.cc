// ctxsel-cli admin backup FILE: an online backup of the server's variant
// store (docs/operations.md, "Backup and restore").
// ctxsel-cli admin token --role=ROLE --name=NAME: a fresh bearer token on
// stdout, and on stderr the line that grants it, for the server's
// --tokens_file (docs/security.md). Offline: the server never sees it.
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

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "client/cli/command.h"
#include "client/cli/service_output.h"
#include "formats/store_file.h"
#include "formats/tokens_file.h"

ABSL_FLAG(std::string, role, "",
          "admin token: the token's role (admin, agent, launcher, reader).");
ABSL_FLAG(std::string, name, "",
          "admin token: who holds it; for role agent, its node id.");

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
  CTXSEL_ASSIGN_OR_RETURN(StoreSummary inspected, InspectStoreFile(tmp));
  if (inspected.revision != summary->revision() ||
      inspected.variant_count != summary->variant_count()) {
    return absl::DataLossError(absl::StrCat(
        "the copy holds revision ", inspected.revision, " with ",
        inspected.variant_count, " variant(s); the server announced revision ",
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

int RunToken() {
  absl::StatusOr<Role> role = RoleFromName(absl::GetFlag(FLAGS_role));
  if (!role.ok()) return BadUsage("admin token", role.status().message());
  const std::string name = absl::GetFlag(FLAGS_name);
  if (name.empty() || name.find_first_of(" \t\n#") != std::string::npos) {
    return BadUsage("admin token", "--name: required, without spaces or '#'");
  }
  const std::string token = NewToken();
  std::printf("%s\n", token.c_str());
  std::fprintf(stderr, "%s\n", TokenLine(*role, name, token).c_str());
  return kExitOk;
}

int RunAdmin(const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "backup") return RunBackup(args[1]);
  if (args.size() == 1 && args[0] == "token") return RunToken();
  return UsageError(kAdminCommand);
}

}  // namespace

const Command kAdminCommand = {
    "admin",
    "admin backup FILE\n"
    "admin token --role=ROLE --name=NAME",
    "Back up the server's store to FILE; or print a new token and its line.",
    RunAdmin};

}  // namespace ctxsel::cli
