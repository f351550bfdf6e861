// data_dir.h: the files that guard a --data_dir besides the database itself.
//
//   LOCK   flock()ed for as long as a server uses the directory and holding
//          its pid, so a second server on the same directory fails to start
//          instead of writing beside the first.
//   STATE  what the store held after its last known commit (revision and
//          variant count). It lives outside ctxsel.db so that an emptied,
//          deleted or rolled-back database cannot also erase the evidence
//          that it once held data.
//
//   absl::StatusOr<std::unique_ptr<DataDirLock>> lock =
//       DataDirLock::Acquire("/var/lib/ctxsel");
//   absl::StatusOr<std::optional<StoreState>> state =
//       ReadStoreState("/var/lib/ctxsel");
//   absl::Status written = WriteStoreState("/var/lib/ctxsel", {7, 300});
#ifndef CTXSEL_SERVER_STORE_DATA_DIR_H_
#define CTXSEL_SERVER_STORE_DATA_DIR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ctxsel::server {

inline constexpr char kLockFileName[] = "LOCK";
inline constexpr char kStateFileName[] = "STATE";

// An exclusive flock() on DIR/LOCK, released when destroyed (or when the
// process dies, however it dies).
class DataDirLock {
 public:
  // Takes the lock and writes this process's pid into DIR/LOCK.
  // FailedPreconditionError "data directory DIR is in use by ctxsel-server
  // pid N" when another process (or another DataDirLock in this one) holds
  // it; FailedPreconditionError when DIR/LOCK cannot be opened.
  static absl::StatusOr<std::unique_ptr<DataDirLock>> Acquire(
      const std::string& dir);

  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  const int fd_;
};

// Creates `dir` if it does not exist, mode 0700 whatever the umask (its
// parents as std::filesystem makes them), then CheckDataDirMode(). Every
// file the server makes in it is 0600 and never follows a symlink
// (O_NOFOLLOW): only the server's user may read the store, and no one else
// may plant a link where the server writes. FailedPreconditionError naming
// `dir` when it cannot be made; CheckDataDirMode()'s errors.
absl::Status PrepareDataDir(const std::string& dir);

// FailedPreconditionError when `dir` is not a directory; PermissionDeniedError
// when its group or others may write to it (they could plant a symlink, or
// swap a file, where the server writes): the message says `chmod go-w DIR`.
absl::Status CheckDataDirMode(const std::string& dir);

// What the store held after a commit.
struct StoreState {
  int64_t revision = 0;
  int64_t variant_count = 0;
};

// DIR/STATE, or nullopt when there is none. DataLossError naming the file
// when it exists but cannot be read or parsed.
absl::StatusOr<std::optional<StoreState>> ReadStoreState(
    const std::string& dir);

// Replaces DIR/STATE atomically (temporary file, fdatasync, rename): a crash
// leaves the old state or the new one, never a torn file.
absl::Status WriteStoreState(const std::string& dir, const StoreState& state);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_STORE_DATA_DIR_H_
