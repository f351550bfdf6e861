#include "server/model/names.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"

namespace ctxsel::server {

absl::Status ValidateName(const std::string& name, const std::string& field) {
  if (name.empty()) return FieldViolation(field, "empty");
  if (name.size() > kMaxNameBytes) {
    return FieldViolation(
        field, absl::StrCat("longer than ", kMaxNameBytes, " bytes"));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return FieldViolation(field, absl::StrCat("control character in '",
                                                absl::CHexEscape(name), "'"));
    }
  }
  if (name.front() == ' ' || name.back() == ' ') {
    return FieldViolation(
        field, absl::StrCat("leading or trailing space in '", name, "'"));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
