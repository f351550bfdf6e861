#include "selector/pragma/fortran_expr.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "selector/pragma/directive.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using text_scan::IsIdentChar;

// Fortran operators and literals with a dot form, and their C spelling.
struct DottedWord {
  const char* fortran;
  const char* c;
};
constexpr DottedWord kDotted[] = {
    {".true.", "true"}, {".false.", "false"}, {".not.", "!"},
    {".and.", "&&"},    {".or.", "||"},       {".eqv.", "EQV"},
    {".neqv.", "NEQV"}, {".eq.", "=="},       {".ne.", "!="},
    {".lt.", "<"},      {".le.", "<="},       {".gt.", ">"},
    {".ge.", ">="},
};

struct Tok {
  std::string text;  // C spelling for operators; as written otherwise
  size_t offset;     // in the line
  size_t end;
};

// Output text with a position per character.
struct Out {
  std::string text;
  std::vector<size_t> offsets;  // line offset each character came from
  void Add(absl::string_view s, size_t offset) {
    for (char c : s) {
      text.push_back(c);
      offsets.push_back(offset);
    }
  }
  void Add(const Out& other) {
    text += other.text;
    offsets.insert(offsets.end(), other.offsets.begin(), other.offsets.end());
  }
};

// Fortran's component selector `s%n` in C spelling, `s.n`: the engine then
// keeps a condition using it as runtime-only (selector/expr.h).
std::string ComponentsInC(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"%", "."}});
}

class Translator {
 public:
  Translator(const LogicalLine& line, size_t begin, size_t end)
      : line_(line), t_(line.text) {
    Tokenize(begin, end);
  }

  absl::StatusOr<Out> Run() {
    if (!error_.ok()) return error_;
    CTXSEL_ASSIGN_OR_RETURN(Out e, Equiv());
    if (at_ < toks_.size()) return Error(toks_[at_].offset, "unexpected");
    return e;
  }

 private:
  void Tokenize(size_t i, size_t end) {
    while (i < end) {
      const char c = t_[i];
      if (absl::ascii_isspace(c)) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      std::string text;
      if (c == '.' && i + 1 < end && absl::ascii_isalpha(t_[i + 1])) {
        while (j < end && absl::ascii_isalpha(t_[j])) ++j;
        if (j >= end || t_[j] != '.') {
          error_ = Error(i, "unexpected '.'");
          return;
        }
        ++j;
        const std::string word = absl::AsciiStrToLower(t_.substr(i, j - i));
        for (const DottedWord& d : kDotted) {
          if (word == d.fortran) text = d.c;
        }
        if (text.empty()) {
          error_ =
              Error(i, absl::StrCat("unknown Fortran operator '", word, "'"));
          return;
        }
      } else if (IsIdentChar(c) || c == '%') {
        while (j < end && (IsIdentChar(t_[j]) || t_[j] == '%' ||
                           (absl::ascii_isdigit(c) && t_[j] == '.' &&
                            j + 1 < end && absl::ascii_isdigit(t_[j + 1])))) {
          ++j;
        }
        text = t_.substr(i, j - i);
      } else if (c == '"' || c == '\'') {
        while (j < end && t_[j] != c) ++j;
        j = std::min(j + 1, end);
        text = t_.substr(i, j - i);
      } else {
        const std::string two = t_.substr(i, std::min<size_t>(2, end - i));
        if (two == "==" || two == "<=" || two == ">=" || two == "**" ||
            two == "//") {
          j = i + 2;
          text = two;
        } else if (two == "/=") {
          j = i + 2;
          text = "!=";
        } else {
          text = std::string(1, c);
        }
      }
      toks_.push_back({text, i, j});
      i = j;
    }
  }

  absl::Status Error(size_t offset, absl::string_view message) const {
    return ErrorAt(line_, offset,
                   absl::StrCat("Fortran expression: ", message));
  }
  bool Peek(absl::string_view text) const {
    return at_ < toks_.size() && toks_[at_].text == text;
  }

  // Binary levels, loosest first.
  absl::StatusOr<Out> Binary(int level) {
    static const std::vector<std::vector<absl::string_view>> kLevels = {
        {"EQV", "NEQV"},  // distinct from the relational == and !=
        {"||"},
        {"&&"},
    };
    if (level == static_cast<int>(kLevels.size())) return Not();
    CTXSEL_ASSIGN_OR_RETURN(Out left, Binary(level + 1));
    while (at_ < toks_.size()) {
      const Tok& op = toks_[at_];
      bool match = false;
      for (absl::string_view o : kLevels[level]) match |= op.text == o;
      if (!match) break;
      ++at_;
      CTXSEL_ASSIGN_OR_RETURN(Out right, Binary(level + 1));
      Out out;
      out.Add("(", op.offset);
      out.Add(left);
      const std::string c = op.text == "EQV"    ? "=="
                            : op.text == "NEQV" ? "!="
                                                : op.text;
      out.Add(" " + c + " ", op.offset);
      out.Add(right);
      out.Add(")", op.offset);
      left = std::move(out);
    }
    return left;
  }
  absl::StatusOr<Out> Equiv() { return Binary(0); }

  absl::StatusOr<Out> Not() {
    if (Peek("!")) {
      const Tok& op = toks_[at_++];
      CTXSEL_ASSIGN_OR_RETURN(Out operand, Not());
      Out out;
      out.Add("(!", op.offset);
      out.Add(operand);
      out.Add(")", op.offset);
      return out;
    }
    return Relational();
  }

  absl::StatusOr<Out> Relational() {
    CTXSEL_ASSIGN_OR_RETURN(Out left, Additive());
    for (absl::string_view o : {"==", "!=", "<", "<=", ">", ">="}) {
      if (Peek(o)) {
        const Tok& op = toks_[at_++];
        CTXSEL_ASSIGN_OR_RETURN(Out right, Additive());
        Out out;
        out.Add("(", op.offset);
        out.Add(left);
        out.Add(" " + op.text + " ", op.offset);
        out.Add(right);
        out.Add(")", op.offset);
        return out;
      }
    }
    return left;
  }

  absl::StatusOr<Out> Additive() {
    Out out;
    if (Peek("+") || Peek("-")) {  // unary
      const Tok& op = toks_[at_++];
      out.Add(op.text, op.offset);
    }
    absl::StatusOr<Out> term = Multiplicative();
    if (!term.ok()) return term;
    out.Add(*term);
    while (Peek("+") || Peek("-")) {
      const Tok& op = toks_[at_++];
      term = Multiplicative();
      if (!term.ok()) return term;
      out.Add(" " + op.text + " ", op.offset);
      out.Add(*term);
    }
    return Wrap(out);
  }

  absl::StatusOr<Out> Multiplicative() {
    CTXSEL_ASSIGN_OR_RETURN(Out left, Primary());
    Out out = left;
    while (Peek("*") || Peek("/")) {
      const Tok& op = toks_[at_++];
      CTXSEL_ASSIGN_OR_RETURN(Out right, Primary());
      out.Add(" " + op.text + " ", op.offset);
      out.Add(right);
    }
    return Wrap(out);
  }

  static Out Wrap(const Out& inner) {
    if (inner.offsets.empty()) return inner;
    Out out;
    out.Add("(", inner.offsets.front());
    out.Add(inner);
    out.Add(")", inner.offsets.back());
    return out;
  }

  absl::StatusOr<Out> Primary() {
    if (at_ >= toks_.size()) {
      return Error(toks_.empty() ? 0 : toks_.back().end, "expected an operand");
    }
    const Tok& tok = toks_[at_];
    if (tok.text == "**" || tok.text == "//") {
      return Error(tok.offset,
                   absl::StrCat("'", tok.text, "' is not supported"));
    }
    Out out;
    if (tok.text == "(") {
      ++at_;
      CTXSEL_ASSIGN_OR_RETURN(Out inner, Equiv());
      if (!Peek(")")) return Error(tok.offset, "unbalanced parenthesis");
      ++at_;
      return Wrap(inner);
    }
    if (tok.text == "true" || tok.text == "false" || IsIdentChar(tok.text[0]) ||
        tok.text[0] == '%' || tok.text[0] == '"' || tok.text[0] == '\'') {
      ++at_;
      out.Add(ComponentsInC(tok.text), tok.offset);
      if (Peek("(") && IsIdentChar(tok.text[0])) {  // a call: kept as written
        const size_t open = toks_[at_].offset;
        int depth = 0;
        size_t end = open;
        for (; at_ < toks_.size(); ++at_) {
          if (toks_[at_].text == "(") ++depth;
          if (toks_[at_].text == ")" && --depth == 0) {
            end = toks_[at_++].end;
            break;
          }
        }
        for (size_t k = open; k < end; ++k) {
          out.Add(ComponentsInC(t_.substr(k, 1)), k);
        }
      }
      if (Peek("**") || Peek("//")) {
        return Error(toks_[at_].offset,
                     absl::StrCat("'", toks_[at_].text, "' is not supported"));
      }
      return out;
    }
    return Error(tok.offset, absl::StrCat("unexpected '", tok.text, "'"));
  }

  const LogicalLine& line_;
  const std::string& t_;
  std::vector<Tok> toks_;
  size_t at_ = 0;
  absl::Status error_;
};

// Whether [begin, end) of `text` holds a Fortran-only operator (`%`, the
// component selector, included: read as written it would be C's modulo).
bool HasFortranOperator(absl::string_view text) {
  if (absl::StrContains(text, '%')) return true;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '.' && absl::ascii_isalpha(text[i + 1])) return true;
    if (text[i] == '/' && text[i + 1] == '=') return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<LogicalLine> TranslateFortranExpressions(
    const LogicalLine& line) {
  const std::string& t = line.text;
  const std::string lower = absl::AsciiStrToLower(t);
  if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(lower), "!$omp")) {
    return line;
  }
  LogicalLine out;
  out.end = line.end;
  size_t copied = 0;
  auto copy = [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      out.text.push_back(t[k]);
      out.positions.push_back(line.PositionOf(k));
    }
  };
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '"' || t[i] == '\'') {  // skip literals
      const char q = t[i];
      for (++i; i < t.size() && t[i] != q; ++i) {
      }
      continue;
    }
    if (i > 0 && IsIdentChar(t[i - 1])) continue;
    size_t name_end = 0;
    for (absl::string_view name : {"condition", "score", "device_num"}) {
      if (absl::StartsWith(absl::string_view(lower).substr(i), name)) {
        name_end = i + name.size();
      }
    }
    if (name_end == 0) continue;
    size_t open = name_end;
    while (open < t.size() && absl::ascii_isspace(t[open])) ++open;
    if (open >= t.size() || t[open] != '(') continue;
    int depth = 0;
    size_t close = open;
    for (; close < t.size(); ++close) {
      if (t[close] == '(') ++depth;
      if (t[close] == ')' && --depth == 0) break;
    }
    if (close >= t.size()) continue;  // the directive parser reports it
    const absl::string_view argument =
        absl::string_view(t).substr(open + 1, close - open - 1);
    if (!HasFortranOperator(argument)) continue;
    CTXSEL_ASSIGN_OR_RETURN(Out c, Translator(line, open + 1, close).Run());
    copy(copied, open + 1);
    for (size_t k = 0; k < c.text.size(); ++k) {
      out.text.push_back(c.text[k]);
      out.positions.push_back(line.PositionOf(c.offsets[k]));
    }
    copied = close;
    i = close;
  }
  if (copied == 0) return line;
  copy(copied, t.size());
  return out;
}

}  // namespace ctxsel::pragma
