#include "selector/pragma/clauses.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "selector/selector_error.h"

namespace ctxsel::pragma {
namespace {

// Directive text with whitespace runs (left by continuation lines) made one
// space.
std::string CollapseSpaces(absl::string_view text) {
  std::string out;
  for (char c : absl::StripAsciiWhitespace(text)) {
    if (absl::ascii_isspace(c)) {
      if (out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

constexpr absl::string_view kAdjustOps[] = {"nothing", "need_device_ptr"};
constexpr absl::string_view kInteropTypes[] = {"target", "targetsync"};

template <size_t N>
bool OneOf(absl::string_view word, const absl::string_view (&list)[N]) {
  for (absl::string_view w : list) {
    if (w == word) return true;
  }
  return false;
}

absl::StatusOr<AdjustArgs> ReadAdjustArgs(const LogicalLine& line,
                                          const OmpClause& clause) {
  const size_t colon = FindTopLevel(clause.argument, ':');
  if (colon == absl::string_view::npos) {
    return ErrorAt(line, clause.argument_offset,
                   "adjust_args needs 'op: arguments'");
  }
  AdjustArgs adjust;
  adjust.op =
      std::string(absl::StripAsciiWhitespace(clause.argument.substr(0, colon)));
  if (!OneOf(adjust.op, kAdjustOps)) {
    return ErrorAt(
        line, clause.argument_offset,
        absl::StrCat("unknown adjust_args operation '", adjust.op,
                     "'; expected one of ", absl::StrJoin(kAdjustOps, ", ")));
  }
  const absl::string_view rest =
      absl::string_view(clause.argument).substr(colon + 1);
  for (const Piece& arg : SplitTopLevel(rest, ',')) {
    if (arg.text.empty()) {
      return ErrorAt(line, clause.argument_offset + colon + 1 + arg.offset,
                     "adjust_args: empty argument name");
    }
    adjust.args.push_back(arg.text);
  }
  return adjust;
}

absl::StatusOr<std::vector<std::vector<std::string>>> ReadAppendArgs(
    const LogicalLine& line, const OmpClause& clause) {
  std::vector<std::vector<std::string>> ops;
  for (const Piece& op : SplitTopLevel(clause.argument, ',')) {
    const size_t at = clause.argument_offset + op.offset;
    absl::string_view text = op.text;
    if (!absl::ConsumePrefix(&text, "interop") ||
        !absl::ConsumePrefix(&text, "(") || !absl::ConsumeSuffix(&text, ")")) {
      return ErrorAt(line, at,
                     "append_args: expected interop(interop-type, ...)");
    }
    std::vector<std::string> types;
    for (const Piece& type : SplitTopLevel(text, ',')) {
      if (!OneOf(type.text, kInteropTypes)) {
        return ErrorAt(line, at + 8 + type.offset,
                       absl::StrCat("append_args: unknown interop type '",
                                    type.text, "'; expected one of ",
                                    absl::StrJoin(kInteropTypes, ", ")));
      }
      types.push_back(type.text);
    }
    ops.push_back(std::move(types));
  }
  return ops;
}

// The OpenMP 5.2 directive names a metadirective variant may start with
// (combined constructs start with one of them), and what they are.
enum class VariantUse { kConstruct, kStandalone, kMetadirective };
struct DirectiveName {
  absl::string_view name;  // words separated by one space
  VariantUse use;
};
constexpr DirectiveName kDirectiveNames[] = {
    {"allocate", VariantUse::kConstruct},
    {"allocators", VariantUse::kConstruct},
    {"assume", VariantUse::kConstruct},
    {"atomic", VariantUse::kConstruct},
    {"barrier", VariantUse::kStandalone},
    {"begin metadirective", VariantUse::kMetadirective},
    {"cancel", VariantUse::kStandalone},
    {"cancellation point", VariantUse::kStandalone},
    {"critical", VariantUse::kConstruct},
    {"depobj", VariantUse::kStandalone},
    {"dispatch", VariantUse::kConstruct},
    {"distribute", VariantUse::kConstruct},
    {"do", VariantUse::kConstruct},
    {"error", VariantUse::kStandalone},
    {"flush", VariantUse::kStandalone},
    {"for", VariantUse::kConstruct},
    {"interop", VariantUse::kStandalone},
    {"loop", VariantUse::kConstruct},
    {"masked", VariantUse::kConstruct},
    {"master", VariantUse::kConstruct},
    {"metadirective", VariantUse::kMetadirective},
    {"nothing", VariantUse::kConstruct},
    {"ordered", VariantUse::kConstruct},
    {"parallel", VariantUse::kConstruct},
    {"scan", VariantUse::kStandalone},
    {"scope", VariantUse::kConstruct},
    {"section", VariantUse::kConstruct},
    {"sections", VariantUse::kConstruct},
    {"simd", VariantUse::kConstruct},
    {"single", VariantUse::kConstruct},
    {"target", VariantUse::kConstruct},
    {"target enter data", VariantUse::kStandalone},
    {"target exit data", VariantUse::kStandalone},
    {"target update", VariantUse::kStandalone},
    {"task", VariantUse::kConstruct},
    {"taskgroup", VariantUse::kConstruct},
    {"taskloop", VariantUse::kConstruct},
    {"taskwait", VariantUse::kStandalone},
    {"taskyield", VariantUse::kStandalone},
    {"teams", VariantUse::kConstruct},
    {"tile", VariantUse::kConstruct},
    {"unroll", VariantUse::kConstruct},
    {"workshare", VariantUse::kConstruct},
};

// Checks one directive variant ("" is `nothing`): a known directive, not a
// metadirective (5.1 §2.3.4), not standalone in a `begin metadirective`.
absl::Status CheckDirectiveVariant(const LogicalLine& line, size_t offset,
                                   absl::string_view text, bool begin) {
  if (text.empty()) return absl::OkStatus();
  // The leading words, up to a clause's parenthesis.
  std::string words;
  for (size_t i = 0; i < text.size() && text[i] != '('; ++i) {
    words.push_back(text[i]);
  }
  const DirectiveName* best = nullptr;
  for (const DirectiveName& d : kDirectiveNames) {
    if (absl::StartsWith(words, d.name) &&
        (words.size() == d.name.size() || words[d.name.size()] == ' ' ||
         words[d.name.size()] == ',') &&
        (best == nullptr || d.name.size() > best->name.size())) {
      best = &d;
    }
  }
  const std::string first = words.substr(0, words.find_first_of(" ,"));
  if (best == nullptr) {
    return ErrorAt(line, offset,
                   absl::StrCat("'", first, "' is not an OpenMP directive"));
  }
  if (best->use == VariantUse::kMetadirective) {
    return ErrorAt(line, offset,
                   "a directive variant must not be a metadirective");
  }
  if (begin && best->use == VariantUse::kStandalone) {
    return ErrorAt(line, offset,
                   absl::StrCat("'", best->name,
                                "' is a standalone directive: it cannot be a "
                                "variant of begin metadirective"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VariantClauses> ReadVariantClauses(const LogicalLine& line,
                                                  const OmpDirective& directive,
                                                  absl::string_view what) {
  VariantClauses out;
  for (const OmpClause& clause : directive.clauses) {
    const bool known = clause.name == "match" || clause.name == "adjust_args" ||
                       clause.name == "append_args";
    if (!known) {
      return ErrorAt(
          line, clause.name_offset,
          absl::StrCat("unknown clause '", clause.name, "' on ", what));
    }
    if (!clause.has_argument) {
      return ErrorAt(line, clause.name_offset,
                     absl::StrCat(clause.name, " needs an argument"));
    }
    if (clause.name == "match") {
      if (out.match != nullptr) {
        return ErrorAt(line, clause.name_offset,
                       absl::StrCat("more than one match clause on ", what));
      }
      out.match = &clause;
    } else if (clause.name == "adjust_args") {
      CTXSEL_ASSIGN_OR_RETURN(AdjustArgs adjust, ReadAdjustArgs(line, clause));
      out.adjust_args.push_back(std::move(adjust));
    } else {
      CTXSEL_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> append,
                              ReadAppendArgs(line, clause));
      for (auto& op : append) out.append_args.push_back(std::move(op));
    }
  }
  if (out.match == nullptr) {
    return ErrorAt(line, directive.offset,
                   absl::StrCat(what, " has no match clause"));
  }
  return out;
}

absl::Status RebaseSelectorError(const absl::Status& status,
                                 const std::vector<SelectorOrigin>& origins) {
  const SelectorOrigin& start = origins.front();
  std::optional<selector::SelectorError> e = selector::GetSelectorError(status);
  if (!e) return ErrorAt(*start.line, start.offset, status.message());
  // Logical lines hold no newlines: a selector taken from one is one line,
  // and its column - 1 is the offset from the text's start.
  auto rebase = [&](const selector::TextPosition& p) -> Position {
    if (p.line != 1 || p.text < 0 ||
        static_cast<size_t>(p.text) >= origins.size()) {
      return start.line->PositionOf(start.offset);
    }
    const SelectorOrigin& o = origins[p.text];
    return o.line->PositionOf(o.offset + p.column - 1);
  };
  std::string message = e->message;
  if (e->first) {
    const Position first = rebase(*e->first);
    absl::StrAppend(&message, " (first at ", first.line, ":", first.column,
                    ")");
  }
  if (!e->context.empty()) absl::StrAppend(&message, " (", e->context, ")");
  const Position at = rebase(e->position);
  return absl::InvalidArgumentError(
      absl::StrCat(at.line, ":", at.column, ": ", message));
}

absl::StatusOr<selector::Selector> ParseSelectorAt(const LogicalLine& line,
                                                   absl::string_view text,
                                                   size_t offset,
                                                   selector::Directive kind) {
  absl::StatusOr<selector::Selector> s = selector::Selector::Parse(text, kind);
  if (s.ok()) return s;
  return RebaseSelectorError(s.status(), {{&line, offset}});
}

absl::StatusOr<MetadirectiveClauses> ReadMetadirectiveClauses(
    const LogicalLine& line, const OmpDirective& directive) {
  const bool begin = directive.kind == DirectiveKind::kBeginMetadirective;
  MetadirectiveClauses out;
  for (const OmpClause& clause : directive.clauses) {
    if (clause.name == "when") {
      const size_t colon = FindTopLevel(clause.argument, ':');
      if (colon == absl::string_view::npos) {
        return ErrorAt(line, clause.argument_offset,
                       "when needs 'context-selector: directive'");
      }
      const std::string text = clause.argument.substr(0, colon);
      CTXSEL_ASSIGN_OR_RETURN(
          selector::Selector s,
          ParseSelectorAt(line, text, clause.argument_offset,
                          selector::Directive::kMetadirective));
      std::string variant =
          CollapseSpaces(absl::string_view(clause.argument).substr(colon + 1));
      CTXSEL_RETURN_IF_ERROR(CheckDirectiveVariant(
          line, clause.argument_offset + colon + 1, variant, begin));
      out.when.push_back({std::move(s),
                          std::string(absl::StripAsciiWhitespace(text)),
                          std::move(variant), clause.name_offset});
    } else if (clause.name == "otherwise" || clause.name == "default") {
      if (out.otherwise.has_value()) {
        return ErrorAt(
            line, clause.name_offset,
            absl::StrCat("'", clause.name, "' after '", out.otherwise_clause,
                         "': a metadirective has one of them"));
      }
      out.otherwise = CollapseSpaces(clause.argument);
      out.otherwise_clause = clause.name;
      CTXSEL_RETURN_IF_ERROR(CheckDirectiveVariant(line, clause.argument_offset,
                                                   *out.otherwise, begin));
    } else {
      return ErrorAt(
          line, clause.name_offset,
          absl::StrCat("unknown clause '", clause.name, "' on metadirective"));
    }
  }
  return out;
}

}  // namespace ctxsel::pragma
