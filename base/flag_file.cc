#include "base/flag_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ctxsel {

absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag,
                                         const std::string& path) {
  // read(2), not a stream: an empty file is text (a tokens file that
  // revokes every token), a directory is an error (EISDIR).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string text;
  ssize_t n = fd < 0 ? -1 : 0;
  if (fd >= 0) {
    char buffer[1 << 16];
    while ((n = read(fd, buffer, sizeof(buffer))) > 0 ||
           (n < 0 && errno == EINTR)) {
      if (n > 0) text.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
  }
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read ", path));
  }
  return text;
}

absl::StatusOr<std::string> ReadPemFlagFile(absl::string_view flag,
                                            const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFlagFile(flag, path);
  if (pem.ok() && pem->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", path, " holds no PEM block"));
  }
  return pem;
}

}  // namespace ctxsel
