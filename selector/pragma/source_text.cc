#include "selector/pragma/source_text.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using text_scan::IsIdentChar;

struct Char {
  char c;
  Position pos;
};

// Phase 1 of C translation: drops backslash-newline pairs (and '\r' before a
// newline), keeping each remaining character's original position.
std::vector<Char> Splice(absl::string_view text) {
  std::vector<Char> out;
  out.reserve(text.size());
  Position pos;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      size_t j = i + 1;
      if (j < text.size() && text[j] == '\r') ++j;
      if (j < text.size() && text[j] == '\n') {
        i = j;
        ++pos.line;
        pos.column = 1;
        continue;
      }
    }
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out.push_back({c, pos});
    if (c == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  out.push_back({'\n', pos});  // every line ends with a newline
  return out;
}

// The identifier-or-number token that ends `text`.
absl::string_view TrailingWord(const std::string& text) {
  size_t start = text.size();
  while (start > 0 && (IsIdentChar(text[start - 1]) || text[start - 1] == '.' ||
                       text[start - 1] == '\'')) {
    --start;
  }
  return absl::string_view(text).substr(start);
}

// A `'` after a number is a digit separator (1'000), not a literal.
bool StartsWithDigit(absl::string_view word) {
  return !word.empty() && absl::ascii_isdigit(word[0]);
}

bool IsRawStringPrefix(absl::string_view word) {
  return word == "R" || word == "u8R" || word == "uR" || word == "UR" ||
         word == "LR";
}

class CSplitter {
 public:
  explicit CSplitter(absl::string_view text) : in_(Splice(text)) {}

  std::vector<LogicalLine> Run() {
    while (i_ < in_.size()) {
      const Char& ch = in_[i_];
      if (ch.c == '\n') {
        line_.end = ch.pos;
        lines_.push_back(std::move(line_));
        line_ = LogicalLine();
        ++i_;
      } else if (ch.c == '/' && Peek(1) == '/') {
        Emit(' ', ch.pos);
        while (in_[i_].c != '\n') ++i_;
      } else if (ch.c == '/' && Peek(1) == '*') {
        Emit(' ', ch.pos);
        i_ += 2;
        while (i_ < in_.size() && !(in_[i_].c == '*' && Peek(1) == '/')) ++i_;
        i_ = std::min(i_ + 2, in_.size());
      } else if (ch.c == '"' && IsRawStringPrefix(TrailingWord(line_.text))) {
        RawString();
      } else if (ch.c == '"' ||
                 (ch.c == '\'' && !StartsWithDigit(TrailingWord(line_.text)))) {
        Literal(ch.c);
      } else {
        Emit(ch.c, ch.pos);
        ++i_;
      }
    }
    return std::move(lines_);
  }

 private:
  char Peek(size_t ahead) const {
    return i_ + ahead < in_.size() ? in_[i_ + ahead].c : '\0';
  }
  void Emit(char c, Position pos) {
    line_.text.push_back(c);
    line_.positions.push_back(pos);
  }
  // A "..." or '...' literal, kept verbatim; ends at its quote or the line.
  void Literal(char quote) {
    Emit(in_[i_].c, in_[i_].pos);
    ++i_;
    while (in_[i_].c != '\n') {
      const Char& ch = in_[i_++];
      Emit(ch.c, ch.pos);
      if (ch.c == '\\' && in_[i_].c != '\n') {
        Emit(in_[i_].c, in_[i_].pos);
        ++i_;
      } else if (ch.c == quote) {
        return;
      }
    }
  }
  // R"delim( ... )delim" becomes "" (it may span lines).
  void RawString() {
    const Position start = in_[i_].pos;
    std::string delimiter;
    size_t j = i_ + 1;
    while (j < in_.size() && in_[j].c != '(' && in_[j].c != '\n') {
      delimiter.push_back(in_[j++].c);
    }
    const std::string close = ")" + delimiter + "\"";
    for (j = j + 1; j < in_.size(); ++j) {
      if (Matches(j, close)) {
        j += close.size();
        break;
      }
    }
    Emit('"', start);
    Emit('"', start);
    i_ = std::min(j, in_.size() - 1);
  }
  bool Matches(size_t at, absl::string_view s) const {
    if (at + s.size() > in_.size()) return false;
    for (size_t k = 0; k < s.size(); ++k) {
      if (in_[at + k].c != s[k]) return false;
    }
    return true;
  }

  std::vector<Char> in_;
  size_t i_ = 0;
  LogicalLine line_;
  std::vector<LogicalLine> lines_;
};

// Fortran: where a `!` comment starts outside strings, or npos.
size_t FortranCommentStart(absl::string_view line, size_t from) {
  char quote = 0;
  for (size_t i = from; i < line.size(); ++i) {
    if (quote != 0) {
      if (line[i] == quote) quote = 0;
    } else if (line[i] == '\'' || line[i] == '"') {
      quote = line[i];
    } else if (line[i] == '!') {
      return i;
    }
  }
  return absl::string_view::npos;
}

std::vector<LogicalLine> SplitFortran(absl::string_view text) {
  std::vector<LogicalLine> lines;
  LogicalLine current;
  bool continuing = false;
  int number = 0;
  for (absl::string_view physical : absl::StrSplit(text, '\n')) {
    ++number;
    absl::ConsumeSuffix(&physical, "\r");
    size_t start = 0;
    while (start < physical.size() && absl::ascii_isspace(physical[start])) {
      ++start;
    }
    const bool directive =
        absl::StartsWithIgnoreCase(physical.substr(start), "!$omp");
    if (continuing && !directive &&
        (start == physical.size() || physical[start] == '!')) {
      continue;  // comment lines may sit between continued lines
    }
    size_t body = start;
    if (directive && continuing) {
      body = start + 5;  // drop the sentinel of a continuation line
    }
    size_t stop = FortranCommentStart(physical, directive ? start + 5 : start);
    if (stop == absl::string_view::npos) stop = physical.size();
    while (stop > body && absl::ascii_isspace(physical[stop - 1])) --stop;
    if (continuing) {
      while (body < stop && absl::ascii_isspace(physical[body])) ++body;
      if (body < stop && physical[body] == '&') ++body;
    }
    const bool continues = stop > body && physical[stop - 1] == '&';
    if (continues) --stop;
    for (size_t i = body; i < stop; ++i) {
      current.text.push_back(physical[i]);
      current.positions.push_back({number, static_cast<int>(i) + 1});
    }
    continuing = continues;
    if (!continues) {
      current.end = {number, static_cast<int>(stop) + 1};
      lines.push_back(std::move(current));
      current = LogicalLine();
    }
  }
  if (continuing) lines.push_back(std::move(current));
  return lines;
}

// Fixed form (Fortran 2018 §6.3.3).
constexpr size_t kFixedFormWidth = 72;

bool IsFixedSentinel(absl::string_view line) {
  return line.size() >= 5 &&
         (line[0] == 'c' || line[0] == 'C' || line[0] == '*' ||
          line[0] == '!') &&
         absl::EqualsIgnoreCase(line.substr(1, 4), "$omp");
}

std::vector<LogicalLine> SplitFortranFixed(absl::string_view text,
                                           std::vector<SourceNote>* notes) {
  std::vector<LogicalLine> lines;
  LogicalLine current;
  bool open = false;  // `current` may still be continued
  auto flush = [&] {
    if (open) lines.push_back(std::move(current));
    current = LogicalLine();
    open = false;
  };
  int number = 0;
  for (absl::string_view physical : absl::StrSplit(text, '\n')) {
    ++number;
    absl::ConsumeSuffix(&physical, "\r");
    if (!physical.empty() && physical[0] == '#') {
      flush();
      for (size_t i = 0; i < physical.size(); ++i) {
        current.text.push_back(physical[i]);
        current.positions.push_back({number, static_cast<int>(i) + 1});
      }
      current.end = {number, static_cast<int>(physical.size()) + 1};
      open = true;
      flush();
      continue;
    }
    const bool directive = IsFixedSentinel(physical);
    if (!directive && !physical.empty() &&
        (physical[0] == 'c' || physical[0] == 'C' || physical[0] == '*' ||
         physical[0] == '!')) {
      continue;  // a comment line
    }
    if (absl::StripAsciiWhitespace(physical).empty()) continue;
    if (physical.size() > kFixedFormWidth) {
      const absl::string_view tail = physical.substr(kFixedFormWidth);
      const size_t comment = FortranCommentStart(physical, directive ? 5 : 0);
      if (!absl::StripAsciiWhitespace(tail).empty() &&
          (comment == absl::string_view::npos || comment > kFixedFormWidth) &&
          notes != nullptr) {
        notes->push_back({{number, static_cast<int>(kFixedFormWidth) + 1},
                          "fixed form: text past column 72 is ignored"});
      }
      physical = physical.substr(0, kFixedFormWidth);
    }
    const bool continuation = physical.size() > 5 && physical[5] != ' ' &&
                              physical[5] != '0' && physical[5] != '\t';
    size_t body = continuation ? 6 : 5;
    if (!continuation || !open) {
      flush();
      open = true;
      if (directive) {
        for (int i = 0; i < 5; ++i) {
          current.text.push_back("!$omp"[i]);
          current.positions.push_back({number, i + 1});
        }
      } else {
        body = std::min<size_t>(6, physical.size());
      }
    } else {
      current.text.push_back(' ');
      current.positions.push_back({number, static_cast<int>(body) + 1});
    }
    body = std::min(body, physical.size());
    if (continuation) {
      while (body < physical.size() && absl::ascii_isspace(physical[body])) {
        ++body;
      }
    }
    size_t stop = FortranCommentStart(physical, body);
    if (stop == absl::string_view::npos) stop = physical.size();
    while (stop > body && absl::ascii_isspace(physical[stop - 1])) --stop;
    for (size_t i = body; i < stop; ++i) {
      current.text.push_back(physical[i]);
      current.positions.push_back({number, static_cast<int>(i) + 1});
    }
    current.end = {number, static_cast<int>(stop) + 1};
  }
  flush();
  return lines;
}

}  // namespace

bool IsFixedFormName(absl::string_view file_name) {
  for (absl::string_view ext : {".f", ".for", ".ftn"}) {
    if (absl::EndsWithIgnoreCase(file_name, ext)) return true;
  }
  return false;
}

Language LanguageOf(absl::string_view file_name) {
  for (absl::string_view ext :
       {".f", ".for", ".ftn", ".f90", ".f95", ".f03", ".f08"}) {
    if (absl::EndsWithIgnoreCase(file_name, ext)) return Language::kFortran;
  }
  return Language::kC;
}

std::vector<LogicalLine> SplitLogicalLines(absl::string_view text,
                                           Language language, bool fixed_form,
                                           std::vector<SourceNote>* notes) {
  if (language == Language::kFortran) {
    return fixed_form ? SplitFortranFixed(text, notes) : SplitFortran(text);
  }
  return CSplitter(text).Run();
}

}  // namespace ctxsel::pragma
