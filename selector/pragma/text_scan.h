// text_scan.h: the character-level steps every source scanner of the
// importer takes (identifiers, blanks, quoted literals), written once.
// Internal to //selector/pragma.
#ifndef CTXSEL_SELECTOR_PRAGMA_TEXT_SCAN_H_
#define CTXSEL_SELECTOR_PRAGMA_TEXT_SCAN_H_

#include <cstddef>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace ctxsel::pragma::text_scan {

// A letter, digit or underscore.
inline bool IsIdentChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

// A letter or underscore: what an identifier starts with.
inline bool IsIdentStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }

// Whether all of `text` is one identifier.
inline bool IsIdentifier(absl::string_view text) {
  if (text.empty() || !IsIdentStart(text[0])) return false;
  for (char c : text) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

// The end of the identifier characters starting at `i`.
inline size_t IdentEnd(absl::string_view text, size_t i) {
  while (i < text.size() && IsIdentChar(text[i])) ++i;
  return i;
}

// The first non-blank at or after `i`.
inline size_t SkipSpace(absl::string_view text, size_t i) {
  while (i < text.size() && absl::ascii_isspace(text[i])) ++i;
  return i;
}

// The end of the "..." or '...' literal starting at `i` (backslash escapes
// honoured); text.size() when it is not closed.
inline size_t LiteralEnd(absl::string_view text, size_t i) {
  const char quote = text[i];
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      return i + 1;
    }
  }
  return text.size();
}

}  // namespace ctxsel::pragma::text_scan

#endif  // CTXSEL_SELECTOR_PRAGMA_TEXT_SCAN_H_
