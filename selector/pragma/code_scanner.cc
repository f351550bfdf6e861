#include "selector/pragma/code_scanner.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using text_scan::IsIdentChar;
using text_scan::IsIdentStart;

bool IsIdentifier(const std::string& t) {
  return !t.empty() && IsIdentStart(t[0]);
}

// Words that may precede `(` in a declaration without naming a function.
bool IsNotAFunctionName(const std::string& word) {
  static const auto* words = new absl::flat_hash_set<std::string>{
      "__attribute__", "__declspec", "alignas",    "decltype", "noexcept",
      "sizeof",        "typeof",     "__typeof__", "requires", "operator",
      "void",          "char",       "short",      "int",      "long",
      "float",         "double",     "signed",     "unsigned", "bool",
      "auto",          "const",      "volatile",   "static",   "extern",
      "inline",        "typedef",    "return",     "using",    "static_assert"};
  return words->contains(word);
}

// What a head whose `{` opens a scope to descend into opens, or "".
struct ScopeHead {
  std::string what;  // "a namespace", "a class", ...
  std::string name;  // its name ("" for extern "C")
  bool is_class = false;
};
std::optional<ScopeHead> OpensScope(const std::vector<std::string>& words) {
  if (words.size() >= 2 && words[0] == "extern" && words[1] == "\"\"") {
    return ScopeHead{"an extern \"C\" block", "", false};
  }
  const bool is_template = !words.empty() && words[0] == "template";
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "enum") return std::nullopt;
    if (w == "namespace") {
      std::string name;
      for (size_t k = i + 1; k < words.size(); ++k) name += words[k];
      return ScopeHead{"a namespace",
                       name.empty() ? "(anonymous namespace)" : name, false};
    }
    if (w == "class" || w == "struct" || w == "union") {
      if (is_template && i > 0 && words[i - 1] != ">") continue;  // <class T>
      std::string name;
      for (size_t k = i + 1; k < words.size(); ++k) {
        if (IsIdentifier(words[k]) && words[k] != "final" &&
            words[k] != "alignas") {
          name = words[k];
          break;
        }
        if (words[k] == ":" || words[k] == "<") break;
      }
      return ScopeHead{is_template ? "a class template" : "a class", name,
                       true};
    }
  }
  return std::nullopt;
}

}  // namespace

bool CodeScanner::at_declaration_scope() const {
  return blocks_.empty() || blocks_.back().kind == Block::kScope;
}

std::vector<CodeEvent> CodeScanner::Feed(const LogicalLine& line,
                                         size_t line_index) {
  std::vector<CodeEvent> events;
  const std::string& t = line.text;
  for (size_t i = 0; i < t.size();) {
    const char c = t[i];
    size_t start = i;
    if (absl::ascii_isspace(c)) {
      ++i;
      continue;
    }
    if (IsIdentStart(c)) {
      while (i < t.size() && IsIdentChar(t[i])) ++i;
    } else if (absl::ascii_isdigit(c)) {
      while (i < t.size() && (IsIdentChar(t[i]) || t[i] == '.' || t[i] == '\''))
        ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < t.size() && t[i] != c; ++i) {
        if (t[i] == '\\') ++i;
      }
      ++i;
      OnToken({"\"\"", line_index, start, line.PositionOf(start)},
              events);  // literals are opaque
      continue;
    } else if (c == ':' && i + 1 < t.size() && t[i + 1] == ':') {
      i += 2;
    } else {
      ++i;
    }
    OnToken(
        {t.substr(start, i - start), line_index, start, line.PositionOf(start)},
        events);
  }
  return events;
}

CodeEvent CodeScanner::FunctionEvent(CodeEvent::Kind kind,
                                     const FunctionName& name) {
  CodeEvent e;
  e.kind = kind;
  e.name = QualifiedName(name);
  e.line = head_[name.first].line;
  e.offset = head_[name.first].offset;
  e.position = head_[name.first].position;
  e.not_a_base = NotABase(name, e.name);
  for (size_t i = name.params + 1, depth = 1; i < head_.size(); ++i) {
    if (head_[i].text == "(") ++depth;
    if (head_[i].text == ")" && --depth == 0) break;
    if (!e.parameters.empty()) e.parameters += ' ';
    e.parameters += head_[i].text;
  }
  return e;
}

void CodeScanner::OnToken(Token token, std::vector<CodeEvent>& events) {
  if (!at_declaration_scope()) {
    if (token.text == "{") ++body_depth_;
    if (token.text == "}" && --body_depth_ == 0) {
      if (blocks_.back().kind == Block::kBody) current_function_.clear();
      blocks_.pop_back();
    }
    return;
  }
  if (token.text == "{") {
    OnOpenBrace(token, events);
  } else if (token.text == "}") {
    if (!blocks_.empty()) blocks_.pop_back();
    head_.clear();
  } else if (token.text == ";") {
    if (std::optional<FunctionName> name = FindFunctionName()) {
      events.push_back(FunctionEvent(CodeEvent::kFunctionDeclaration, *name));
    } else if (!head_.empty()) {
      events.push_back({CodeEvent::kOtherDeclaration, "", token.line,
                        token.offset, "", "", token.position});
    }
    head_.clear();
  } else if (token.text == ":" && head_.size() == 1 &&
             (head_[0].text == "public" || head_[0].text == "private" ||
              head_[0].text == "protected")) {
    head_.clear();
  } else {
    head_.push_back(std::move(token));
  }
}

void CodeScanner::OnOpenBrace(const Token& brace,
                              std::vector<CodeEvent>& events) {
  std::vector<std::string> words;
  bool has_assignment = false;
  for (const Token& t : head_) {
    words.push_back(t.text);
    if (t.text == "=") has_assignment = true;
  }
  std::optional<ScopeHead> scope =
      has_assignment ? std::nullopt : OpensScope(words);
  std::optional<FunctionName> name =
      scope && scope->is_class ? std::nullopt : FindFunctionName();
  if (name) {
    CodeEvent e = FunctionEvent(CodeEvent::kFunctionDefinition, *name);
    current_function_ = e.name;
    events.push_back(std::move(e));
    blocks_.push_back({Block::kBody, "", false});
    body_depth_ = 1;
  } else if (scope) {
    events.push_back({CodeEvent::kScope, "", brace.line, brace.offset,
                      scope->what, "", brace.position});
    blocks_.push_back({Block::kScope, scope->name, scope->is_class});
  } else {
    events.push_back({CodeEvent::kOtherDeclaration, "", brace.line,
                      brace.offset, "", "", brace.position});
    blocks_.push_back({Block::kOpaque, "", false});
    body_depth_ = 1;
  }
  head_.clear();
}

std::optional<CodeScanner::FunctionName> CodeScanner::FindFunctionName() const {
  size_t i = 0;
  if (!head_.empty() && head_[0].text == "template") {
    int angle = 0;  // skip template<...>
    for (i = 1; i < head_.size(); ++i) {
      if (head_[i].text == "<") ++angle;
      if (head_[i].text == ">" && --angle == 0) break;
    }
    ++i;
  }
  for (int paren = 0; i < head_.size(); ++i) {
    const std::string& t = head_[i].text;
    if (t == "=" && paren == 0) return std::nullopt;
    if (t == "operator" && paren == 0) {
      // operator+ operator() operator new[] operator bool operator""_x
      FunctionName name;
      name.first = static_cast<int>(i);
      name.name = "operator";
      size_t k = i + 1;
      if (k + 1 < head_.size() && head_[k].text == "(" &&
          head_[k + 1].text == ")") {
        name.name += "()";
        k += 2;
      }
      for (; k < head_.size() && head_[k].text != "("; ++k) {
        const std::string& part = head_[k].text;
        if (IsIdentifier(part) && IsIdentChar(name.name.back()) &&
            name.name.back() != '"') {
          name.name += " ";
        }
        name.name += part;
      }
      if (k >= head_.size()) return std::nullopt;
      name.params = static_cast<int>(k);
      return name;
    }
    if (t == "(") {
      if (paren == 0 && i > 0 && IsIdentifier(head_[i - 1].text) &&
          !IsNotAFunctionName(head_[i - 1].text)) {
        FunctionName name;
        name.first = static_cast<int>(i - 1);
        name.name = head_[i - 1].text;
        if (i >= 2 && head_[i - 2].text == "~") {
          name.first = static_cast<int>(i - 2);
          name.name = "~" + name.name;
        }
        name.params = static_cast<int>(i);
        return name;
      }
      ++paren;
    } else if (t == ")") {
      --paren;
    }
  }
  return std::nullopt;
}

std::string CodeScanner::QualifiedName(const FunctionName& name) const {
  std::string qualified = name.name;
  int i = name.first;
  while (i >= 2 && head_[i - 1].text == "::" &&
         IsIdentifier(head_[i - 2].text)) {
    qualified = head_[i - 2].text + "::" + qualified;
    i -= 2;
  }
  for (auto b = blocks_.rbegin(); b != blocks_.rend(); ++b) {
    if (!b->name.empty()) qualified = b->name + "::" + qualified;
  }
  return qualified;
}

std::string CodeScanner::NotABase(const FunctionName& name,
                                  const std::string& qualified) const {
  if (absl::StartsWith(name.name, "~")) return "a destructor";
  // OpenMP 5.1 §2.3.5 (C++): not a virtual, defaulted or deleted function.
  for (int i = 0; i < name.first; ++i) {
    if (head_[i].text == "virtual") return "a virtual function";
  }
  int depth = 0;  // of parentheses, from the parameter list on
  for (size_t i = name.params; i < head_.size(); ++i) {
    const std::string& t = head_[i].text;
    if (t == "(") ++depth;
    if (t == ")") --depth;
    if (depth != 0) continue;
    if (t == "override" || t == "final") return "a virtual function";
    if (t == "=" && i + 1 < head_.size()) {
      if (head_[i + 1].text == "default") return "a defaulted function";
      if (head_[i + 1].text == "delete") return "a deleted function";
    }
  }
  // A constructor: named after its class (in the class, or `S::S`).
  const std::vector<std::string> parts = absl::StrSplit(qualified, "::");
  if (parts.size() >= 2 && parts[parts.size() - 2] == parts.back()) {
    const bool in_class = !blocks_.empty() && blocks_.back().is_class &&
                          blocks_.back().name == parts.back();
    const bool out_of_line = name.first >= 2 &&
                             head_[name.first - 1].text == "::" &&
                             head_[name.first - 2].text == parts.back();
    if (in_class || out_of_line) return "a constructor";
  }
  // Several declarators: a top-level comma outside <...> and (...).
  int paren = 0, angle = 0;
  size_t i = 0;
  if (!head_.empty() && head_[0].text == "template") {
    for (int depth = 0; i < head_.size(); ++i) {
      if (head_[i].text == "<") ++depth;
      if (head_[i].text == ">" && --depth == 0) break;
    }
    ++i;
  }
  for (; i < head_.size(); ++i) {
    const std::string& t = head_[i].text;
    if (static_cast<int>(i) == name.first) {
      i = name.params - 1;  // the name itself (operator, may hold a comma)
      continue;
    }
    if (t == "(" || t == "[") ++paren;
    if (t == ")" || t == "]") --paren;
    if (paren == 0 && t == "<") ++angle;
    if (paren == 0 && t == ">" && angle > 0) --angle;
    if (t == "," && paren == 0 && angle == 0) {
      return "a declaration with several declarators";
    }
  }
  return "";
}

void FortranScopes::Feed(const LogicalLine& line) {
  std::string text = absl::AsciiStrToLower(line.text);
  std::vector<std::string> words =
      absl::StrSplit(text, absl::ByAnyChar(" \t(,"), absl::SkipEmpty());
  if (words.empty()) return;
  // `end`, `end subroutine f`, `endsubroutine`; not `end do`, `endif`.
  absl::string_view first = words[0];
  if (absl::ConsumePrefix(&first, "end")) {
    absl::string_view what =
        first.empty() && words.size() > 1 ? absl::string_view(words[1]) : first;
    if (what.empty() || what == "subroutine" || what == "function" ||
        what == "program" || what == "module" || what == "submodule" ||
        what == "interface") {
      if (!scopes_.empty()) scopes_.pop_back();
    }
    return;
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "=" || absl::StrContains(w, "=")) return;  // an assignment
    if ((w == "subroutine" || w == "function") && i + 1 < words.size()) {
      scopes_.push_back(words[i + 1]);
      return;
    }
    if ((w == "program" || w == "interface" ||
         (w == "module" && words.size() == i + 2 &&
          words[i + 1] != "procedure")) &&
        i == 0) {
      scopes_.push_back("");
      return;
    }
    if (w == "abstract" && words.size() > 1 && words[1] == "interface") {
      scopes_.push_back("");
      return;
    }
    if (w == "call" || w == "if" || w == "do") return;
  }
}

std::string FortranScopes::current_procedure() const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    if (!it->empty()) return *it;
  }
  return "";
}

}  // namespace ctxsel::pragma
