#include "server/model/log_text.h"

#include "absl/strings/str_format.h"

namespace ctxsel::server {

std::string LogSafe(absl::string_view text) {
  const bool cut = text.size() > kMaxLogTextBytes;
  if (cut) text = text.substr(0, kMaxLogTextBytes);
  std::string out;
  out.reserve(text.size() + (cut ? 3 : 0));
  for (const char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          absl::StrAppendFormat(&out, "\\x%02x", byte);
        } else {
          out += c;
        }
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace ctxsel::server
