// selector_field_error.h: the one way a selector text that a request field
// carries (a variant's selector, a device filter)
// reports its parse error: INVALID_ARGUMENT "<field>: L:C: what is wrong",
// with a BadRequest naming the field and an ErrorInfo (SELECTOR_INVALID)
// whose metadata has the line and column as data (selector_error.h), plus
// whatever the caller adds (kernel, variant).
//
//   absl::StatusOr<Selector> s = Selector::Parse(text);
//   if (!s.ok()) return SelectorFieldError("device_filter", s.status());
#ifndef CTXSEL_SERVER_MODEL_SELECTOR_FIELD_ERROR_H_
#define CTXSEL_SERVER_MODEL_SELECTOR_FIELD_ERROR_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace ctxsel::server {

// `label` replaces `field` at the start of the message when it says more
// ("variants[2] (saxpy_nv).selector").
absl::Status SelectorFieldError(
    const std::string& field, const absl::Status& parse_error,
    std::vector<std::pair<std::string, std::string>> metadata = {},
    const std::string& label = "");

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_SELECTOR_FIELD_ERROR_H_
