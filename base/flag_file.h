// flag_file.h: reads a file named by a command-line flag (certificates,
// keys, tokens), with an error that names the flag.
//
//   CTXSEL_ASSIGN_OR_RETURN(std::string pem, ReadPemFlagFile("tls_cert",
//   path));
#ifndef CTXSEL_BASE_FLAG_FILE_H_
#define CTXSEL_BASE_FLAG_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel {

// The whole of `path` (empty for an empty file); InvalidArgumentError
// "--FLAG: cannot read PATH" when it cannot be opened or read (a
// directory).
absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag,
                                         const std::string& path);

// ReadFlagFile() of a certificate, key or CA: also InvalidArgumentError
// "--FLAG: PATH holds no PEM block" when no "-----BEGIN " is in it.
absl::StatusOr<std::string> ReadPemFlagFile(absl::string_view flag,
                                            const std::string& path);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_FLAG_FILE_H_
