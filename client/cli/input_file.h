// input_file.h: how ctxsel-cli commands read the files named on their
// command line (eval documents, variants files, sources to import).
//
//   absl::StatusOr<std::string> text = ReadInputFile(path);  // "-": stdin
//   if (!text.ok()) return ReportError("eval", text.status());
#ifndef CTXSEL_CLIENT_CLI_INPUT_FILE_H_
#define CTXSEL_CLIENT_CLI_INPUT_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace ctxsel::cli {

// The whole content of `path`, byte for byte, or of standard input when
// `path` is "-". NOT_FOUND "cannot read <path>" when it cannot be opened.
absl::StatusOr<std::string> ReadInputFile(const std::string& path);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_INPUT_FILE_H_
