// error_reasons.h: the ErrorInfo.reason constants of base/error_reasons.def,
// one per failure a caller handles differently, and that table as data.
//
//   return WithErrorInfo(absl::NotFoundError("node: 'n1' is not known"),
//                        kReasonNodeNotFound, {{"node", "n1"}});
//
//   const ErrorReason* r = FindErrorReason(info.reason());  // null: unknown
#ifndef CTXSEL_BASE_ERROR_REASONS_H_
#define CTXSEL_BASE_ERROR_REASONS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ctxsel {

#define CTXSEL_ERROR_REASON(id, name, code, keys, meaning) \
  inline constexpr char kReason##id[] = name;
#include "base/error_reasons.def"
#undef CTXSEL_ERROR_REASON

// One row of error_reasons.def.
struct ErrorReason {
  const char* name;           // "CLAIMS_EXHAUSTED"
  absl::StatusCode code;      // the code it comes with
  const char* metadata_keys;  // "kernel, fitting, count, first_expiry"
  const char* meaning;        // one line for people
};

// Every row of error_reasons.def, in its order.
absl::Span<const ErrorReason> ErrorReasons();

// The row named `name`, or nullptr when the table has none.
const ErrorReason* FindErrorReason(absl::string_view name);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_ERROR_REASONS_H_
