// eval_context.h: the "context" object of a `ctxsel-cli eval` document
// (format in docs/selectors.md) read into the selector engine's Context.
//
// Every error is INVALID_ARGUMENT and names the field by its path in the
// document, so a user can find it in a large file:
//
//   absl::StatusOr<selector::Context> ctx = ReadEvalContext(doc["context"]);
//   // e.g. "context.construct[4].simdlen must be an integer"
//   //      "unknown field 'devcie' in context"
#ifndef CTXSEL_CLIENT_CLI_EVAL_CONTEXT_H_
#define CTXSEL_CLIENT_CLI_EVAL_CONTEXT_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "selector/selector.h"

namespace ctxsel::cli {

// The context an eval document describes; `null` (no "context") is the empty
// context. Booleans are accepted where integers are (true = 1).
absl::StatusOr<selector::Context> ReadEvalContext(
    const nlohmann::json& context);

// OK when `j` is an object whose keys are all in `allowed`; otherwise
// "<path> must be an object" or "unknown field '<key>' in <path>".
absl::Status CheckFields(const nlohmann::json& j, absl::string_view path,
                         absl::Span<const absl::string_view> allowed);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_EVAL_CONTEXT_H_
