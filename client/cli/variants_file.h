// Reads the variants to register from a JSON document:
//   {"kernel": "saxpy", "variants": [{"name", "selector", "kernel",
//     "adjust_args", "append_args", "source_file", "source_line",
//     "images"}, ...], "images": [...]}
// or just the array. An eval document works as it is. A `kernel` given at
// the top or on a variant must be the kernel being registered: variants of
// another kernel are an error, never silently re-homed. Top-level "images"
// (`ctxsel-cli import --from_binary`) go to each variant without its own.
#ifndef CTXSEL_CLIENT_CLI_VARIANTS_FILE_H_
#define CTXSEL_CLIENT_CLI_VARIANTS_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::cli {

// Parses `text`; errors name the offending field, e.g.
// "variants[1].kernel: 'gemm' is not the kernel being registered ('saxpy')".
absl::StatusOr<std::vector<ctxsel::v1::Variant>> ParseVariantsFile(
    const std::string& text, const std::string& kernel);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_VARIANTS_FILE_H_
