// lexer.h: splits context-selector text into tokens.
//
// Whitespace, newlines, `//` and `/* */` comments separate tokens. Every
// token knows its 1-based line and column, so errors can point at it.
//
// Example:
//   absl::StatusOr<std::vector<Token>> tokens = Lex("device={kind(gpu)}");
#ifndef CTXSEL_SELECTOR_LEXER_H_
#define CTXSEL_SELECTOR_LEXER_H_

#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/selector_error.h"

namespace ctxsel::selector::internal {

// 1-based line and column (and, in an effective selector, which text).
using Pos = TextPosition;

// Whether `a` comes before `b` (texts in order, then lines, then columns).
inline bool Before(const Pos& a, const Pos& b) {
  return std::tie(a.text, a.line, a.column) <
         std::tie(b.text, b.line, b.column);
}

enum class TokenKind { kIdent, kInt, kString, kPunct, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // identifier, digits, string contents, or punctuator
  Pos pos;
  bool Is(absl::string_view punct) const {
    return kind == TokenKind::kPunct && text == punct;
  }
};

// Formats "L:C: message" as an InvalidArgumentError carrying its
// SelectorError (selector_error.h).
absl::Status ErrorAt(Pos pos, absl::string_view message);
// The same for a thing given twice: "L:C: message (first at L:C)".
absl::Status ErrorAt(Pos pos, absl::string_view message, Pos first);

// Tokenizes `text`; the last token is always kEnd. Fails on characters that
// cannot start a token, unterminated strings and comments.
absl::StatusOr<std::vector<Token>> Lex(absl::string_view text);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_LEXER_H_
