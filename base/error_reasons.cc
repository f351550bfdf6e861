#include "base/error_reasons.h"

namespace ctxsel {
namespace {

constexpr ErrorReason kErrorReasons[] = {
#define CTXSEL_ERROR_REASON(id, name, code, keys, meaning) \
  {name, absl::StatusCode::code, keys, meaning},
#include "base/error_reasons.def"
#undef CTXSEL_ERROR_REASON
};

}  // namespace

absl::Span<const ErrorReason> ErrorReasons() { return kErrorReasons; }

const ErrorReason* FindErrorReason(absl::string_view name) {
  for (const ErrorReason& reason : kErrorReasons) {
    if (reason.name == name) return &reason;
  }
  return nullptr;
}

}  // namespace ctxsel
