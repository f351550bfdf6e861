// Reading C/C++/Fortran sources for `import` and `variants register
// --from_source`: one set of flags, one way to call the pragma importer.
//
//   --define=NAME[=VALUE],...   like -D: for #if and macros in directives
//   --undefine=NAME,...         like -U (after the defines; _OPENMP too)
//   --fortran_form=auto|fixed|free
//                               auto: fixed form for .f .for .ftn (any case)
//   --from_binary=APP           the device images the built program carries
//                               (docs/binaries.md), recorded with the variants
//
// Warnings (skipped constructs) go to stderr as "file:line:column: warning:
// ..." by the caller.
#ifndef CTXSEL_CLIENT_CLI_SOURCE_IMPORT_H_
#define CTXSEL_CLIENT_CLI_SOURCE_IMPORT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "selector/pragma/importer.h"

namespace ctxsel::cli {

// The importer options from the flags above; InvalidArgumentError naming
// the flag when one is malformed.
absl::StatusOr<pragma::ImportOptions> ImportOptionsFromFlags();

// The image ids of --from_binary's binary (images::ReadImageIds); none
// without the flag. Errors name the flag.
absl::StatusOr<std::vector<std::string>> FromBinaryImages();

// One kernel's variants from source files, in source order.
using SourceBatches = std::map<std::string, std::vector<v1::Variant>>;

// What the sources declare: the batches to register and what was wrong.
struct SourceImport {
  SourceBatches batches;
  std::vector<std::string> errors;  // "file:line:column: message"
  std::set<std::string> skipped;    // kernels with an invalid directive
};

// Imports every file with the flags above, printing warnings to stderr as
// it goes; kernels with an invalid directive are left out of `batches`.
absl::StatusOr<SourceImport> ImportSources(
    const std::vector<std::string>& files);

// Reads `path` and imports it with `options`.
absl::StatusOr<pragma::ImportResult> ImportSourceFile(
    const std::string& path, const pragma::ImportOptions& options);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_SOURCE_IMPORT_H_
