#include "server/store/data_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace ctxsel::server {
namespace {

constexpr char kStateHeader[] = "ctxsel store state 1";

std::string InDir(const std::string& dir, const char* name) {
  return (std::filesystem::path(dir) / name).string();
}

// Writes all of `text` to `fd`; false on error (errno set).
bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(
    const std::string& dir) {
  const std::string path = InDir(dir, kLockFileName);
  const int fd =
      open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char buffer[32] = {};
    const ssize_t n = pread(fd, buffer, sizeof(buffer) - 1, 0);
    close(fd);
    if (error != EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot lock ", path, ": ", std::strerror(error)));
    }
    // Empty while the holder is between its flock() and its write.
    const absl::string_view pid =
        absl::StripAsciiWhitespace(absl::string_view(buffer, n > 0 ? n : 0));
    return absl::FailedPreconditionError(
        absl::StrCat("data directory ", dir, " is in use by ctxsel-server pid ",
                     pid.empty() ? "(unknown)" : pid, " (", path,
                     "); stop that server or use another --data_dir"));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 || !WriteAll(fd, pid)) {
    const int error = errno;
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

// The file stays: unlinking a lock file lets a waiter lock a dead inode.
DataDirLock::~DataDirLock() { close(fd_); }

absl::Status PrepareDataDir(const std::string& dir) {
  std::error_code error;
  const std::filesystem::path path(dir);
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), error);
  }
  // mkdir's mode is cut by the umask, which never adds bits: 0700 stays.
  if (!error && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    error = std::error_code(errno, std::generic_category());
  }
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create --data_dir ", dir, ": ", error.message()));
  }
  return CheckDataDirMode(dir);
}

absl::Status CheckDataDirMode(const std::string& dir) {
  struct stat info {};
  if (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--data_dir ", dir, " is not a directory"));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    // PERMISSION_DENIED: a setting to fix, not a state to wait out, so a
    // start exits 2 (no restart loop).
    return absl::PermissionDeniedError(absl::StrFormat(
        "--data_dir %s is writable by its group or by others (mode %04o): "
        "they could plant links where the server writes; chmod go-w %s",
        dir, info.st_mode & 07777, dir));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<StoreState>> ReadStoreState(
    const std::string& dir) {
  const std::string path = InDir(dir, kStateFileName);
  std::ifstream in(path);
  if (!in.is_open()) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    return absl::DataLossError(absl::StrCat("cannot read ", path));
  }
  std::string header, revision_key, count_key;
  StoreState state;
  std::getline(in, header);
  in >> revision_key >> state.revision >> count_key >> state.variant_count;
  if (!in || header != kStateHeader || revision_key != "revision" ||
      count_key != "variants" || state.revision < 0 ||
      state.variant_count < 0) {
    return absl::DataLossError(absl::StrCat(
        path, " is not a ctxsel store state file; if ", kStateFileName,
        " was damaged and ctxsel.db is known good, remove ", path));
  }
  return state;
}

absl::Status WriteStoreState(const std::string& dir, const StoreState& state) {
  const std::string path = InDir(dir, kStateFileName);
  const std::string tmp = path + ".tmp";
  const std::string text =
      absl::StrFormat("%s\nrevision %d\nvariants %d\n", kStateHeader,
                      state.revision, state.variant_count);
  // A stale temporary file (or a link planted there) is removed, not
  // written through.
  unlink(tmp.c_str());
  const int fd = open(
      tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
  }
  // Synced before the rename so that the name never points at a file whose
  // data did not reach the disk.
  const bool written = WriteAll(fd, text) && fdatasync(fd) == 0;
  const int error = errno;
  close(fd);
  if (!written) {
    std::remove(tmp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot write ", tmp, ": ", std::strerror(error)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path,
                                            ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
