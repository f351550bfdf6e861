#include "selector/sycl/arch_chain.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ctxsel::sycl {
namespace {

constexpr absl::string_view kIf = "if_architecture_is";
constexpr absl::string_view kElseIf = "else_if_architecture_is";
constexpr absl::string_view kOtherwise = "otherwise";

// A cursor over the chain text that knows its line and column.
class Scanner {
 public:
  explicit Scanner(absl::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) Advance();
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  // Consumes `c` (after spaces) if it is next.
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      Advance();
      return true;
    }
    return false;
  }
  // A name: identifier characters and `::`. Empty when none is next.
  std::string Name() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (absl::ascii_isalnum(text_[pos_]) || text_[pos_] == '_' ||
            (text_[pos_] == ':' && pos_ + 1 < text_.size() &&
             text_[pos_ + 1] == ':'))) {
      if (text_[pos_] == ':') Advance();
      Advance();
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(line_, ":", column_, ": ", what));
  }
  absl::Status ErrorAt(int line, int column, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(line, ":", column, ": ", what));
  }
  int line() const { return line_; }
  int column() const { return column_; }
  std::string Next() {
    SkipSpace();
    if (pos_ == text_.size()) return "end of text";
    return absl::StrCat("'", text_.substr(pos_, 1), "'");
  }

 private:
  void Advance() {
    if (text_[pos_++] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
  }
  absl::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// Parses "(name, name, ...)" after a clause keyword.
absl::StatusOr<std::vector<ArchId>> ParseArchList(Scanner& s,
                                                  absl::string_view keyword) {
  if (!s.Accept('(')) {
    return s.Error(absl::StrCat("expected '(' after ", keyword));
  }
  std::vector<ArchId> archs;
  do {
    s.SkipSpace();
    const int line = s.line(), column = s.column();
    std::string name = s.Name();
    if (name.empty()) {
      return s.Error(
          absl::StrCat("expected an architecture name, found ", s.Next()));
    }
    absl::StatusOr<const ArchInfo*> arch = LookupArch(name);
    if (!arch.ok()) return s.ErrorAt(line, column, arch.status().message());
    archs.push_back((*arch)->id);
  } while (s.Accept(','));
  if (!s.Accept(')')) {
    return s.Error(absl::StrCat("expected ',' or ')', found ", s.Next()));
  }
  return archs;
}

absl::StatusOr<std::string> ParseVariant(Scanner& s) {
  if (!s.Accept(':')) return s.Error("expected ':' before the variant name");
  std::string variant = s.Name();
  if (variant.empty()) {
    return s.Error(absl::StrCat("expected a variant name, found ", s.Next()));
  }
  return variant;
}

}  // namespace

absl::StatusOr<ArchChain> ArchChain::Parse(absl::string_view text) {
  Scanner s(text);
  ArchChain chain;
  while (!s.AtEnd()) {
    const int line = s.line(), column = s.column();
    const std::string keyword = s.Name();
    if (chain.otherwise_.has_value()) {
      return s.ErrorAt(line, column, "'otherwise' must be the last clause");
    }
    const absl::string_view expected = chain.clauses_.empty() ? kIf : kElseIf;
    if (keyword == kOtherwise && !chain.clauses_.empty()) {
      CTXSEL_ASSIGN_OR_RETURN(std::string variant, ParseVariant(s));
      chain.otherwise_ = std::move(variant);
    } else if (keyword == expected) {
      CTXSEL_ASSIGN_OR_RETURN(std::vector<ArchId> archs,
                              ParseArchList(s, keyword));
      CTXSEL_ASSIGN_OR_RETURN(std::string variant, ParseVariant(s));
      chain.clauses_.push_back({std::move(archs), std::move(variant)});
    } else {
      return s.ErrorAt(
          line, column,
          absl::StrCat("expected ", expected,
                       chain.clauses_.empty() ? "" : " or otherwise",
                       keyword.empty()
                           ? absl::StrCat(", found ", s.Next())
                           : absl::StrCat(", found '", keyword, "'")));
    }
    if (!s.Accept(';') && !s.AtEnd()) {
      return s.Error(
          absl::StrCat("expected ';' between clauses, found ", s.Next()));
    }
  }
  if (chain.clauses_.empty()) {
    return s.Error("empty chain: expected if_architecture_is(...)");
  }
  return chain;
}

std::optional<std::string> ArchChain::Select(const ArchInfo& device) const {
  for (const ArchClause& clause : clauses_) {
    for (ArchId id : clause.archs) {
      if (SameDevices(GetArch(id), device)) return clause.variant;
    }
  }
  return otherwise_;
}

absl::StatusOr<std::optional<std::string>> ArchChain::Select(
    absl::string_view device) const {
  CTXSEL_ASSIGN_OR_RETURN(const ArchInfo* arch, LookupArch(device));
  return Select(*arch);
}

std::string ArchChain::ToString() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < clauses_.size(); ++i) {
    parts.push_back(absl::StrCat(i == 0 ? kIf : kElseIf, "(",
                                 absl::StrJoin(clauses_[i].archs, ", ",
                                               [](std::string* out, ArchId id) {
                                                 absl::StrAppend(
                                                     out, GetArch(id).name);
                                               }),
                                 "): ", clauses_[i].variant));
  }
  if (otherwise_) parts.push_back(absl::StrCat(kOtherwise, ": ", *otherwise_));
  return absl::StrJoin(parts, "; ");
}

}  // namespace ctxsel::sycl
