#include "selector/pragma/preprocessor.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "selector/expr.h"
#include "selector/lexer.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using text_scan::IdentEnd;
using text_scan::IsIdentChar;
using text_scan::IsIdentStart;
using text_scan::LiteralEnd;
using text_scan::SkipSpace;

// Macros inside macros deeper than this are left unexpanded (cycles through
// several macros are already stopped by the active set).
constexpr int kMaxExpansionDepth = 64;

// A C integer literal (decimal, 0x, 0b, octal; u/l suffixes) as decimal.
bool DecimalOf(absl::string_view number, std::string& out) {
  std::string digits;
  for (char c : number) {
    if (c != '\'') digits.push_back(c);
  }
  while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' ||
                             digits.back() == 'l' || digits.back() == 'L')) {
    digits.pop_back();
  }
  int base = 10;
  size_t start = 0;
  if (digits.size() > 1 && digits[0] == '0') {
    if (digits[1] == 'x' || digits[1] == 'X') {
      base = 16, start = 2;
    } else if (digits[1] == 'b' || digits[1] == 'B') {
      base = 2, start = 2;
    } else {
      base = 8, start = 1;
    }
  }
  if (start >= digits.size()) return false;
  char* end = nullptr;
  const std::string body = digits.substr(start);
  const long long value = std::strtoll(body.c_str(), &end, base);
  if (end == nullptr || *end != '\0') return false;
  out = std::to_string(value);
  return true;
}

}  // namespace

Preprocessor::Preprocessor(const std::map<std::string, std::string>& defines,
                           const std::vector<std::string>& undefines) {
  object_macros_["_OPENMP"] = kOpenMpVersionMacro;
  for (const auto& [name, value] : defines) object_macros_[name] = value;
  for (const std::string& name : undefines) object_macros_.erase(name);
}

bool Preprocessor::Feed(const LogicalLine& line,
                        std::vector<SourceNote>* notes) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(line.text);
  if (!absl::ConsumePrefix(&t, "#")) return active();
  t = absl::StripLeadingAsciiWhitespace(t);
  const size_t n = IdentEnd(t, 0);
  const absl::string_view word = t.substr(0, n);
  const absl::string_view rest = absl::StripAsciiWhitespace(t.substr(n));
  const Position where = line.PositionOf(line.text.size() - t.size());
  auto decide = [&](absl::string_view directive) {
    Truth v;
    if (directive == "if" || directive == "elif") {
      v = Evaluate(rest);
    } else {
      const std::string name(rest.substr(0, IdentEnd(rest, 0)));
      const bool defined =
          object_macros_.contains(name) || function_macros_.contains(name);
      v = (defined == (directive == "ifdef" || directive == "elifdef"))
              ? Truth::kTrue
              : Truth::kFalse;
    }
    if (v == Truth::kUndecidable) {
      if (notes != nullptr) {
        notes->push_back(
            {where, absl::StrCat("cannot evaluate '#", directive, " ", rest,
                                 "': reading this branch (give the macros "
                                 "it needs with --define/--undefine)")});
      }
      return true;
    }
    return v == Truth::kTrue;
  };
  const std::string is_false =
      absl::StrCat("'#", word, rest.empty() ? "" : " ", rest, "' at line ",
                   where.line, " is false");
  const std::string after_taken = absl::StrCat(
      "'#", word, "' at line ", where.line, " follows a branch that was read");
  if (word == "if" || word == "ifdef" || word == "ifndef") {
    if (!active()) {
      stack_.push_back({false, false, true, ""});
    } else {
      const bool taken = decide(word);
      stack_.push_back({true, taken, taken, taken ? "" : is_false});
    }
    return false;
  }
  if (word == "elif" || word == "elifdef" || word == "elifndef") {
    if (stack_.empty()) return false;
    Group& g = stack_.back();
    if (!g.parent_active || g.decided) {
      g.active = false;
      g.why_skipped = after_taken;
    } else {
      g.active = decide(word);
      g.decided = g.active;
      g.why_skipped = g.active ? "" : is_false;
    }
    return false;
  }
  if (word == "else") {
    if (!stack_.empty()) {
      Group& g = stack_.back();
      g.active = g.parent_active && !g.decided;
      g.decided = true;
      g.why_skipped = g.active ? "" : after_taken;
    }
    return false;
  }
  if (word == "endif") {
    if (!stack_.empty()) stack_.pop_back();
    return false;
  }
  if (!active()) return false;
  if (word == "define") {
    Define(line, rest, notes);
  } else if (word == "undef") {
    const std::string name(rest.substr(0, IdentEnd(rest, 0)));
    object_macros_.erase(name);
    function_macros_.erase(name);
  } else if (word == "include" && absl::StartsWith(rest, "\"") &&
             notes != nullptr) {
    notes->push_back({where, absl::StrCat("#include ", rest,
                                          " is not followed: OpenMP "
                                          "directives in it are not read")});
  }
  return word == "pragma";
}

void Preprocessor::Define(const LogicalLine& line, absl::string_view rest,
                          std::vector<SourceNote>* notes) {
  const size_t n = IdentEnd(rest, 0);
  if (n == 0) return;
  const std::string name(rest.substr(0, n));
  const absl::string_view body = rest.substr(n);
  object_macros_.erase(name);
  function_macros_.erase(name);
  if (absl::StartsWith(body, "(")) {
    function_macros_.insert(name);
  } else {
    object_macros_[name] = std::string(absl::StripAsciiWhitespace(body));
  }
  if (absl::StrContains(body, "_Pragma") && absl::StrContains(body, "omp") &&
      notes != nullptr) {
    const size_t at = line.text.find("_Pragma");
    notes->push_back({line.PositionOf(at),
                      absl::StrCat("macro ", name,
                                   " holds an OpenMP directive: directives "
                                   "from macro expansions are not read")});
  }
}

bool Preprocessor::ExpandCondition(absl::string_view text, int depth,
                                   absl::flat_hash_set<std::string>& active,
                                   std::string& out) const {
  if (depth > kMaxExpansionDepth) return false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (IsIdentStart(c)) {
      const size_t end = IdentEnd(text, i);
      const std::string word(text.substr(i, end - i));
      size_t next = SkipSpace(text, end);
      if (word == "defined") {
        const bool paren = next < text.size() && text[next] == '(';
        if (paren) next = SkipSpace(text, next + 1);
        const size_t name_end = IdentEnd(text, next);
        if (name_end == next) return false;
        const std::string name(text.substr(next, name_end - next));
        next = SkipSpace(text, name_end);
        if (paren) {
          if (next >= text.size() || text[next] != ')') return false;
          ++next;
        }
        const bool defined =
            object_macros_.contains(name) || function_macros_.contains(name);
        absl::StrAppend(&out, defined ? " 1 " : " 0 ");
        i = next;
        continue;
      }
      const auto macro = object_macros_.find(word);
      if (macro != object_macros_.end() && !active.contains(word)) {
        active.insert(word);
        out.push_back(' ');
        if (!ExpandCondition(macro->second, depth + 1, active, out)) {
          return false;
        }
        out.push_back(' ');
        active.erase(word);
      } else if (function_macros_.contains(word) ||
                 (next < text.size() && text[next] == '(')) {
        return false;  // a call the engine cannot evaluate
      } else {
        absl::StrAppend(&out, word == "true" ? " 1 " : " 0 ");
      }
      i = end;
    } else if (absl::ascii_isdigit(c)) {
      size_t end = i;
      while (end < text.size() && (IsIdentChar(text[end]) ||
                                   text[end] == '\'' || text[end] == '.')) {
        ++end;
      }
      std::string decimal;
      if (!DecimalOf(text.substr(i, end - i), decimal)) return false;
      absl::StrAppend(&out, " ", decimal, " ");
      i = end;
    } else if (c == '"' || c == '\'') {
      return false;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return true;
}

Preprocessor::Truth Preprocessor::Evaluate(absl::string_view condition) const {
  std::string expanded;
  absl::flat_hash_set<std::string> active;
  if (!ExpandCondition(condition, 0, active, expanded)) {
    return Truth::kUndecidable;
  }
  absl::StatusOr<std::vector<selector::internal::Token>> tokens =
      selector::internal::Lex(expanded);
  if (!tokens.ok() || tokens->size() < 2) return Truth::kUndecidable;
  size_t at = 0;
  absl::StatusOr<selector::internal::Expression> e =
      selector::internal::ParseExpression(*tokens, at);
  if (!e.ok() || at + 1 != tokens->size() || !e->constant()) {
    return Truth::kUndecidable;
  }
  return e->value() != 0 ? Truth::kTrue : Truth::kFalse;
}

std::string Preprocessor::WhySkipping() const {
  // The outermost group not read is the cause; those inside it follow.
  for (const Group& g : stack_) {
    if (g.parent_active && !g.active) return g.why_skipped;
  }
  return "";
}

LogicalLine Preprocessor::Expand(const LogicalLine& line, size_t from) const {
  LogicalLine out;
  out.end = line.end;
  const absl::string_view text = line.text;
  auto copy = [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      out.text.push_back(text[k]);
      out.positions.push_back(line.PositionOf(k));
    }
  };
  from = std::min(from, text.size());
  copy(0, from);
  for (size_t i = from; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const size_t end = LiteralEnd(text, i);
      copy(i, end);
      i = end;
    } else if (IsIdentStart(c)) {
      const size_t end = IdentEnd(text, i);
      const std::string word(text.substr(i, end - i));
      const auto macro = object_macros_.find(word);
      if (macro != object_macros_.end()) {
        absl::flat_hash_set<std::string> active = {word};
        ExpandInto(macro->second, line.PositionOf(i), 1, active, out);
      } else {
        copy(i, end);
      }
      i = end;
    } else if (absl::ascii_isdigit(c)) {
      size_t end = i;
      while (end < text.size() &&
             (IsIdentChar(text[end]) || text[end] == '.')) {
        ++end;
      }
      copy(i, end);
      i = end;
    } else {
      copy(i, i + 1);
      ++i;
    }
  }
  return out;
}

void Preprocessor::ExpandInto(absl::string_view text, Position position,
                              int depth,
                              absl::flat_hash_set<std::string>& active,
                              LogicalLine& out) const {
  auto emit = [&](absl::string_view s) {
    for (char ch : s) {
      out.text.push_back(ch);
      out.positions.push_back(position);
    }
  };
  emit(" ");
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    size_t end = i + 1;
    if (c == '"' || c == '\'') {
      end = LiteralEnd(text, i);
    } else if (IsIdentStart(c)) {
      end = IdentEnd(text, i);
      const std::string word(text.substr(i, end - i));
      const auto macro = object_macros_.find(word);
      if (macro != object_macros_.end() && !active.contains(word) &&
          depth < kMaxExpansionDepth) {
        active.insert(word);
        ExpandInto(macro->second, position, depth + 1, active, out);
        active.erase(word);
        i = end;
        continue;
      }
    } else if (absl::ascii_isdigit(c)) {
      while (end < text.size() &&
             (IsIdentChar(text[end]) || text[end] == '.')) {
        ++end;
      }
    }
    emit(text.substr(i, end - i));
    i = end;
  }
  emit(" ");
}

}  // namespace ctxsel::pragma
