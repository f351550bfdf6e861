#include "selector/lexer.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ctxsel::selector::internal {
namespace {

// Longest first, so "<=" wins over "<".
// `-> << >> . [ ] & | ^ ~` are only for runtime-only conditions (expr.h).
constexpr absl::string_view kPuncts[] = {
    "<=", ">=", "==", "!=", "&&", "||", "->", "<<", ">>", "=", "{",
    "}",  "(",  ")",  ",",  ":",  "+",  "-",  "*",  "/",  "%", "<",
    ">",  "!",  "?",  ".",  "[",  "]",  "&",  "|",  "^",  "~"};

class Lexer {
 public:
  explicit Lexer(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      CTXSEL_RETURN_IF_ERROR(SkipSpaceAndComments());
      Token token;
      token.pos = pos_;
      if (at_ >= text_.size()) {
        tokens.push_back(std::move(token));
        return tokens;
      }
      CTXSEL_RETURN_IF_ERROR(Next(token));
      tokens.push_back(std::move(token));
    }
  }

 private:
  char Peek(size_t ahead = 0) const {
    return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0';
  }

  void Advance() {
    if (text_[at_] == '\n') {
      ++pos_.line;
      pos_.column = 1;
    } else {
      ++pos_.column;
    }
    ++at_;
  }

  absl::Status SkipSpaceAndComments() {
    while (at_ < text_.size()) {
      char c = Peek();
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
        Advance();
      } else if (c == '/' && Peek(1) == '/') {
        while (at_ < text_.size() && Peek() != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        Pos start = pos_;
        Advance();
        Advance();
        while (at_ < text_.size() && !(Peek() == '*' && Peek(1) == '/')) {
          Advance();
        }
        if (at_ >= text_.size()) return ErrorAt(start, "unterminated comment");
        Advance();
        Advance();
      } else {
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  absl::Status Next(Token& token) {
    unsigned char c = static_cast<unsigned char>(Peek());
    if (absl::ascii_isalpha(c) || c == '_') {
      token.kind = TokenKind::kIdent;
      while (absl::ascii_isalnum(static_cast<unsigned char>(Peek())) ||
             Peek() == '_') {
        token.text.push_back(Peek());
        Advance();
      }
      return absl::OkStatus();
    }
    if (absl::ascii_isdigit(c)) {
      token.kind = TokenKind::kInt;
      while (absl::ascii_isalnum(static_cast<unsigned char>(Peek())) ||
             Peek() == '_') {
        token.text.push_back(Peek());
        Advance();
      }
      return absl::OkStatus();
    }
    if (c == '"') return LexString(token);
    for (absl::string_view p : kPuncts) {
      if (text_.substr(at_, p.size()) == p) {
        token.kind = TokenKind::kPunct;
        token.text = std::string(p);
        for (size_t i = 0; i < p.size(); ++i) Advance();
        return absl::OkStatus();
      }
    }
    std::string shown = absl::ascii_isprint(c)
                            ? std::string(1, static_cast<char>(c))
                            : absl::StrCat("\\x", absl::Hex(c));
    return ErrorAt(pos_, absl::StrCat("unexpected character '", shown, "'"));
  }

  absl::Status LexString(Token& token) {
    token.kind = TokenKind::kString;
    Pos start = pos_;
    Advance();
    while (at_ < text_.size() && Peek() != '"' && Peek() != '\n') {
      token.text.push_back(Peek());
      Advance();
    }
    if (Peek() != '"') return ErrorAt(start, "unterminated string literal");
    Advance();
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t at_ = 0;
  Pos pos_;
};

}  // namespace

absl::Status ErrorAt(Pos pos, absl::string_view message) {
  return MakeSelectorError({pos, std::string(message), std::nullopt, ""});
}

absl::Status ErrorAt(Pos pos, absl::string_view message, Pos first) {
  return MakeSelectorError({pos, std::string(message), first, ""});
}

absl::StatusOr<std::vector<Token>> Lex(absl::string_view text) {
  return Lexer(text).Run();
}

}  // namespace ctxsel::selector::internal
