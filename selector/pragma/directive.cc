#include "selector/pragma/directive.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using text_scan::IsIdentChar;

// The directive names this importer cares about, as word sequences.
struct KnownDirective {
  const char* words[3];
  int count;
  DirectiveKind kind;
};
constexpr KnownDirective kKnown[] = {
    {{"begin", "declare", "variant"}, 3, DirectiveKind::kBeginDeclareVariant},
    {{"end", "declare", "variant"}, 3, DirectiveKind::kEndDeclareVariant},
    {{"declare", "variant"}, 2, DirectiveKind::kDeclareVariant},
    {{"begin", "metadirective"}, 2, DirectiveKind::kBeginMetadirective},
    {{"end", "metadirective"}, 2, DirectiveKind::kEndMetadirective},
    {{"metadirective"}, 1, DirectiveKind::kMetadirective},
};

class Cursor {
 public:
  Cursor(const std::string& text, size_t pos) : text_(text), pos_(pos) {}
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }

 private:
  const std::string& text_;
  size_t pos_;
};

bool IsCloseBracket(char c) { return c == ')' || c == ']' || c == '}'; }

// The offset of the first character from `from` on, outside string and
// character literals, for which `stop(c, depth)` holds; `depth` counts the
// brackets open after `c`. npos if there is none.
template <typename Stop>
size_t ScanOutsideLiterals(absl::string_view text, size_t from, Stop stop) {
  int depth = 0;
  char quote = 0;
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (IsCloseBracket(c)) {
      --depth;
    }
    if (stop(c, depth)) return i;
  }
  return absl::string_view::npos;
}

// The offset just past the bracket that closes the one at `open`, or npos.
size_t MatchingClose(absl::string_view text, size_t open) {
  const size_t close = ScanOutsideLiterals(text, open, [](char c, int depth) {
    return depth == 0 && IsCloseBracket(c);
  });
  return close == absl::string_view::npos ? close : close + 1;
}

// Lower-cases Fortran text outside string literals.
std::string FortranLower(absl::string_view text) {
  std::string out(text);
  char quote = 0;
  for (char& c : out) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else {
      c = absl::ascii_tolower(c);
    }
  }
  return out;
}

// Reads "(argument)" at the cursor into `argument`/`offset`.
absl::Status ReadParenthesized(const LogicalLine& line, const std::string& text,
                               Cursor& cursor, std::string& argument,
                               size_t& offset) {
  const size_t open = cursor.pos();
  const size_t close = MatchingClose(text, open);
  if (close == absl::string_view::npos) {
    return ErrorAt(line, open, "unbalanced parenthesis");
  }
  offset = open + 1;
  argument = text.substr(open + 1, close - open - 2);
  cursor.set_pos(close);
  return absl::OkStatus();
}

absl::Status ReadClauses(const LogicalLine& line, const std::string& text,
                         Cursor& cursor, std::vector<OmpClause>& clauses) {
  // OpenMP 5.2 §3.1: `directive-name [[,] clause [[,] clause] ...]`. One
  // comma may come before any clause, the first included, and a clause must
  // follow it.
  bool after_comma = false;
  while (true) {
    if (cursor.AtEnd()) {
      if (after_comma) {
        return ErrorAt(line, cursor.pos(), "expected a clause after ','");
      }
      return absl::OkStatus();
    }
    if (cursor.Peek() == ',') {
      if (after_comma) {
        return ErrorAt(line, cursor.pos(), "expected a clause before ','");
      }
      after_comma = true;
      cursor.set_pos(cursor.pos() + 1);
      continue;
    }
    after_comma = false;
    OmpClause clause;
    clause.name_offset = cursor.pos();
    clause.name = cursor.Word();
    if (clause.name.empty()) {
      return ErrorAt(line, clause.name_offset,
                     absl::StrCat("expected a clause, found '",
                                  text.substr(clause.name_offset, 1), "'"));
    }
    if (cursor.Peek() == '(') {
      clause.has_argument = true;
      CTXSEL_RETURN_IF_ERROR(ReadParenthesized(
          line, text, cursor, clause.argument, clause.argument_offset));
    }
    clauses.push_back(std::move(clause));
  }
}

}  // namespace

absl::Status ErrorAt(const LogicalLine& line, size_t offset,
                     absl::string_view message) {
  const Position p = line.PositionOf(offset);
  return absl::InvalidArgumentError(
      absl::StrCat(p.line, ":", p.column, ": ", message));
}

std::optional<OmpDirective> ParseOmpDirective(const LogicalLine& line,
                                              Language language) {
  const std::string text =
      language == Language::kFortran ? FortranLower(line.text) : line.text;
  Cursor cursor(text, 0);
  cursor.SkipSpace();
  OmpDirective directive;
  directive.offset = cursor.pos();
  if (language == Language::kFortran) {
    if (!absl::StartsWith(absl::string_view(text).substr(cursor.pos()),
                          "!$omp")) {
      return std::nullopt;
    }
    cursor.set_pos(cursor.pos() + 5);
  } else {
    if (cursor.Peek() != '#') return std::nullopt;
    cursor.set_pos(cursor.pos() + 1);
    if (cursor.Word() != "pragma" || cursor.Word() != "omp") {
      return std::nullopt;
    }
  }
  const size_t after_sentinel = cursor.pos();
  for (const KnownDirective& known : kKnown) {
    cursor.set_pos(after_sentinel);
    int matched = 0;
    while (matched < known.count && cursor.Word() == known.words[matched]) {
      ++matched;
    }
    if (matched == known.count) {
      directive.kind = known.kind;
      break;
    }
  }
  if (directive.kind == DirectiveKind::kOther) return directive;
  if (directive.kind == DirectiveKind::kDeclareVariant) {
    if (cursor.Peek() != '(') {
      directive.error =
          ErrorAt(line, cursor.pos(),
                  "expected '(variant-name)' after declare variant");
      return directive;
    }
    directive.error = ReadParenthesized(line, text, cursor, directive.argument,
                                        directive.argument_offset);
    if (!directive.error.ok()) return directive;
  }
  directive.error = ReadClauses(line, text, cursor, directive.clauses);
  return directive;
}

std::vector<Piece> SplitTopLevel(absl::string_view text, char separator) {
  std::vector<Piece> pieces;
  size_t start = 0;
  while (true) {
    const absl::string_view rest = text.substr(start);
    size_t end = FindTopLevel(rest, separator);
    end = end == absl::string_view::npos ? text.size() : start + end;
    size_t b = start, e = end;
    while (b < e && absl::ascii_isspace(text[b])) ++b;
    while (e > b && absl::ascii_isspace(text[e - 1])) --e;
    pieces.push_back({std::string(text.substr(b, e - b)), b});
    if (end == text.size()) return pieces;
    start = end + 1;
  }
}

size_t FindTopLevel(absl::string_view text, char separator) {
  return ScanOutsideLiterals(text, 0, [separator](char c, int depth) {
    return depth == 0 && c == separator;
  });
}

}  // namespace ctxsel::pragma
