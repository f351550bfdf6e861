#include "server/names.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::server {

absl::Status ValidateName(const std::string& name, const std::string& field) {
  if (name.empty()) return absl::InvalidArgumentError(field + ": empty");
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": longer than ", kMaxNameBytes, " bytes"));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": control character in '", absl::CHexEscape(name), "'"));
    }
  }
  if (name.front() == ' ' || name.back() == ' ') {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": leading or trailing space in '", name, "'"));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
