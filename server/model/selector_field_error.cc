#include "server/model/selector_field_error.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "selector/selector_error.h"

namespace ctxsel::server {

absl::Status SelectorFieldError(
    const std::string& field, const absl::Status& parse_error,
    std::vector<std::pair<std::string, std::string>> metadata,
    const std::string& label) {
  absl::Status status = WithFieldViolation(
      absl::Status(parse_error.code(),
                   absl::StrCat(label.empty() ? field : label, ": ",
                                parse_error.message())),
      field, parse_error.message());
  if (std::optional<selector::SelectorError> e =
          selector::GetSelectorError(parse_error)) {
    metadata.emplace_back("line", absl::StrCat(e->position.line));
    metadata.emplace_back("column", absl::StrCat(e->position.column));
  }
  return WithErrorInfo(std::move(status), kReasonSelectorInvalid, metadata);
}

}  // namespace ctxsel::server
