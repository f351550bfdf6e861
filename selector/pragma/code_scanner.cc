#include "selector/pragma/code_scanner.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ctxsel::pragma {
namespace {

bool IsIdentStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool IsIdentChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }
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

// Starts of heads whose `{` opens a scope to descend into.
bool OpensScope(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (w == "namespace" || w == "class" || w == "struct" || w == "union") {
      return true;
    }
  }
  return words.size() >= 2 && words[0] == "extern" && words[1] == "\"\"";
}

}  // namespace

bool CodeScanner::at_declaration_scope() const {
  return blocks_.empty() || blocks_.back() == Block::kScope;
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
      OnToken({"\"\"", line_index, start}, events);  // literals are opaque
      continue;
    } else if (c == ':' && i + 1 < t.size() && t[i + 1] == ':') {
      i += 2;
    } else {
      ++i;
    }
    OnToken({t.substr(start, i - start), line_index, start}, events);
  }
  return events;
}

void CodeScanner::OnToken(Token token, std::vector<CodeEvent>& events) {
  if (!at_declaration_scope()) {
    if (token.text == "{") ++body_depth_;
    if (token.text == "}" && --body_depth_ == 0) {
      if (blocks_.back() == Block::kBody) current_function_.clear();
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
    const int name = FunctionNameIndex();
    if (name >= 0) {
      events.push_back({CodeEvent::kFunctionDeclaration, QualifiedName(name),
                        head_[name].line, head_[name].offset});
    } else if (!head_.empty()) {
      events.push_back(
          {CodeEvent::kOtherDeclaration, "", token.line, token.offset});
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
  const int name = FunctionNameIndex();
  if (name >= 0) {
    current_function_ = QualifiedName(name);
    events.push_back({CodeEvent::kFunctionDefinition, current_function_,
                      head_[name].line, head_[name].offset});
    blocks_.push_back(Block::kBody);
    body_depth_ = 1;
  } else if (!has_assignment && OpensScope(words)) {
    blocks_.push_back(Block::kScope);
  } else {
    events.push_back(
        {CodeEvent::kOtherDeclaration, "", brace.line, brace.offset});
    blocks_.push_back(Block::kOpaque);
    body_depth_ = 1;
  }
  head_.clear();
}

int CodeScanner::FunctionNameIndex() const {
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
    if (t == "=" && paren == 0) return -1;
    if (t == "(") {
      if (paren == 0 && i > 0 && IsIdentifier(head_[i - 1].text) &&
          !IsNotAFunctionName(head_[i - 1].text)) {
        return static_cast<int>(i - 1);
      }
      ++paren;
    } else if (t == ")") {
      --paren;
    }
  }
  return -1;
}

std::string CodeScanner::QualifiedName(int index) const {
  std::string name = head_[index].text;
  int i = index;
  if (i > 0 && head_[i - 1].text == "~") name = "~" + name, --i;
  while (i >= 2 && head_[i - 1].text == "::" &&
         IsIdentifier(head_[i - 2].text)) {
    name = head_[i - 2].text + "::" + name;
    i -= 2;
  }
  return name;
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
