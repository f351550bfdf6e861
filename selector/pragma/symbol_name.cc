#include "selector/pragma/symbol_name.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ctxsel::pragma {

std::string EncodeSymbolPart(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c)) {
      out.push_back(static_cast<char>(c));
    } else if (c == '_') {
      out += "__";
    } else {
      absl::StrAppendFormat(&out, "_%02X", c);
    }
  }
  return out;
}

std::string VariantSymbolName(absl::string_view base,
                              const selector::Selector& effective) {
  return absl::StrCat(base, "$ompvariant$",
                      EncodeSymbolPart(effective.ToString()));
}

}  // namespace ctxsel::pragma
