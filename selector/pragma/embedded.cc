#include "selector/pragma/embedded.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "selector/pragma/directive.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using text_scan::IsIdentChar;
using text_scan::LiteralEnd;
using text_scan::SkipSpace;

class Splitter {
 public:
  explicit Splitter(const LogicalLine& line) : line_(line), t_(line.text) {}

  std::vector<LinePiece> Run() {
    for (size_t i = 0; i < t_.size();) {
      if (t_[i] == '"' || t_[i] == '\'') {
        const size_t end = LiteralEnd(t_, i);
        Code(i, end);
        i = end;
      } else if (absl::StartsWith(t_.substr(i), "_Pragma") &&
                 (i == 0 || !IsIdentChar(t_[i - 1])) &&
                 !IsIdentChar(i + 7 < t_.size() ? t_[i + 7] : ' ')) {
        i = PragmaOperator(i);
      } else if (absl::StartsWith(t_.substr(i), "[[")) {
        i = Attribute(i);
      } else {
        Code(i, i + 1);
        ++i;
      }
    }
    FlushCode();
    if (pieces_.empty()) return {{false, line_}};
    return std::move(pieces_);
  }

 private:
  void Code(size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      code_.text.push_back(t_[k]);
      code_.positions.push_back(line_.PositionOf(k));
    }
    code_.end = line_.PositionOf(end);
  }
  // Pushes the code read so far unless it is blank.
  void FlushCode() {
    if (!absl::StripAsciiWhitespace(code_.text).empty()) {
      pieces_.push_back({false, std::move(code_)});
    }
    code_ = LogicalLine();
  }
  LogicalLine StartDirective(size_t anchor) {
    LogicalLine d;
    for (char c : absl::string_view("#pragma omp ")) {
      d.text.push_back(c);
      d.positions.push_back(line_.PositionOf(anchor));
    }
    return d;
  }
  void AddDirective(LogicalLine d, size_t end) {
    d.end = line_.PositionOf(end);
    FlushCode();
    pieces_.push_back({true, std::move(d)});
  }

  // `_Pragma ( "string" )` at `i`; returns where scanning goes on.
  size_t PragmaOperator(size_t i) {
    size_t k = SkipSpace(t_, i + 7);
    if (k >= t_.size() || t_[k] != '(') {
      Code(i, i + 7);
      return i + 7;
    }
    k = SkipSpace(t_, k + 1);
    if (k < t_.size() && t_[k] == 'L') ++k;
    if (k >= t_.size() || t_[k] != '"') {
      Code(i, i + 7);
      return i + 7;
    }
    const size_t literal_end = LiteralEnd(t_, k);
    const size_t close = SkipSpace(t_, literal_end);
    if (close >= t_.size() || t_[close] != ')') {
      Code(i, i + 7);
      return i + 7;
    }
    // Destringize: \" becomes " and \\ becomes \ (C 6.10.9).
    LogicalLine body;
    for (size_t c = k + 1; c + 1 < literal_end; ++c) {
      if (t_[c] == '\\' && c + 2 < literal_end &&
          (t_[c + 1] == '"' || t_[c + 1] == '\\')) {
        ++c;
      }
      body.text.push_back(t_[c]);
      body.positions.push_back(line_.PositionOf(c));
    }
    const size_t word = SkipSpace(body.text, 0);
    if (absl::StartsWith(absl::string_view(body.text).substr(word), "omp") &&
        !IsIdentChar(word + 3 < body.text.size() ? body.text[word + 3] : ' ')) {
      LogicalLine d;
      for (char c : absl::string_view("#pragma ")) {
        d.text.push_back(c);
        d.positions.push_back(line_.PositionOf(i));
      }
      d.text += body.text;
      d.positions.insert(d.positions.end(), body.positions.begin(),
                         body.positions.end());
      AddDirective(std::move(d), close + 1);
    }
    return close + 1;
  }

  // The end of the bracket group opened at `open`, or npos.
  size_t GroupEnd(size_t open) const {
    int depth = 0;
    for (size_t k = open; k < t_.size(); ++k) {
      const char c = t_[k];
      if (c == '"' || c == '\'') {
        k = LiteralEnd(t_, k) - 1;
      } else if (c == '[' || c == '(' || c == '{') {
        ++depth;
      } else if (c == ']' || c == ')' || c == '}') {
        if (--depth == 0) return k + 1;
      }
    }
    return absl::string_view::npos;
  }

  // Reads `name(argument)` at `at` (up to `limit`); sets the argument range.
  bool Call(size_t at, size_t limit, absl::string_view name, size_t& begin,
            size_t& end) const {
    if (!absl::StartsWith(t_.substr(at, limit - at), name)) return false;
    size_t k = SkipSpace(t_, at + name.size());
    if (k >= limit || t_[k] != '(') return false;
    const size_t close = GroupEnd(k);
    if (close == absl::string_view::npos || close > limit) return false;
    begin = k + 1;
    end = close - 1;
    return true;
  }

  // One attribute (or sequence element) in [at, limit): adds its
  // directives; false when it is no OpenMP attribute.
  bool OmpAttribute(size_t at, size_t limit, bool in_omp, LogicalLine* anchor,
                    std::vector<std::pair<size_t, size_t>>& out) const {
    at = SkipSpace(t_, at);
    if (absl::StartsWith(t_.substr(at, limit - at), "omp")) {
      const size_t k = SkipSpace(t_, at + 3);
      if (absl::StartsWith(t_.substr(k, limit - k), "::")) {
        at = SkipSpace(t_, k + 2);
        in_omp = true;
      }
    }
    if (!in_omp) return false;
    size_t begin, end;
    if (Call(at, limit, "directive", begin, end) ||
        Call(at, limit, "decl", begin, end)) {
      out.emplace_back(begin, end);
      return true;
    }
    if (Call(at, limit, "sequence", begin, end)) {
      for (const Piece& p : SplitTopLevel(t_.substr(begin, end - begin), ',')) {
        if (p.text.empty()) continue;
        if (!OmpAttribute(begin + p.offset, begin + p.offset + p.text.size(),
                          true, anchor, out)) {
          return false;
        }
      }
      return true;
    }
    return false;
  }

  // `[[ ... ]]` at `i`.
  size_t Attribute(size_t i) {
    const size_t end = GroupEnd(i);
    if (end == absl::string_view::npos || end < i + 4 || t_[end - 2] != ']') {
      Code(i, i + 1);
      return i + 1;
    }
    size_t inner = i + 2;
    const size_t inner_end = end - 2;
    bool using_omp = false;
    size_t k = SkipSpace(t_, inner);
    if (absl::StartsWith(t_.substr(k), "using") && !IsIdentChar(t_[k + 5])) {
      k = SkipSpace(t_, k + 5);
      if (absl::StartsWith(t_.substr(k), "omp")) {
        const size_t colon = SkipSpace(t_, k + 3);
        if (colon < inner_end && t_[colon] == ':') {
          using_omp = true;
          inner = colon + 1;
        }
      }
    }
    std::vector<std::pair<size_t, size_t>> directives;
    for (const Piece& p :
         SplitTopLevel(t_.substr(inner, inner_end - inner), ',')) {
      if (p.text.empty()) continue;
      OmpAttribute(inner + p.offset, inner + p.offset + p.text.size(),
                   using_omp, nullptr, directives);
    }
    if (directives.empty()) {
      Code(i, end);
      return end;
    }
    for (const auto& [begin, stop] : directives) {
      LogicalLine d = StartDirective(i);
      for (size_t c = begin; c < stop; ++c) {
        d.text.push_back(t_[c]);
        d.positions.push_back(line_.PositionOf(c));
      }
      AddDirective(std::move(d), stop);
    }
    return end;
  }

  const LogicalLine& line_;
  const absl::string_view t_;
  LogicalLine code_;
  std::vector<LinePiece> pieces_;
};

}  // namespace

std::vector<LinePiece> SplitEmbeddedDirectives(const LogicalLine& line) {
  if (!absl::StrContains(line.text, "_Pragma") &&
      !absl::StrContains(line.text, "[[")) {
    return {{false, line}};
  }
  return Splitter(line).Run();
}

}  // namespace ctxsel::pragma
