#include "selector/pragma/importer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "selector/pragma/clauses.h"
#include "selector/pragma/code_scanner.h"
#include "selector/pragma/directive.h"
#include "selector/pragma/embedded.h"
#include "selector/pragma/fortran_expr.h"
#include "selector/pragma/preprocessor.h"
#include "selector/pragma/symbol_name.h"
#include "selector/pragma/text_scan.h"

namespace ctxsel::pragma {
namespace {

using selector::Directive;
using selector::Selector;

// An open `begin declare variant` region.
struct Region {
  std::optional<Selector> effective;  // nullopt when its selector was invalid
  std::vector<std::string> texts;     // match texts, outermost first
  SourceLocation location;
  // Where its own match text is, to re-base errors of effective selectors
  // nested in it.
  LogicalLine line;
  size_t match_offset = 0;
};

// A `declare variant` waiting for its base function (C/C++).
struct Pending {
  ImportedVariant variant;  // everything but `base`
  absl::Status error;       // when the directive is invalid
};

// Offset of the text after `#pragma` in a directive line.
size_t AfterPragma(const std::string& text) {
  const size_t at = text.find("pragma");
  return at == std::string::npos ? 0 : at + 6;
}

bool IsFixedSentinelInFreeForm(absl::string_view text) {
  return text.size() >= 5 &&
         (text[0] == 'c' || text[0] == 'C' || text[0] == '*') &&
         absl::EqualsIgnoreCase(text.substr(1, 4), "$omp");
}

class Importer {
 public:
  Importer(absl::string_view file, const ImportOptions& options)
      : file_(file),
        language_(options.language.value_or(LanguageOf(file))),
        fixed_form_(options.fixed_form.value_or(IsFixedFormName(file))),
        preprocessor_(options.defines, options.undefines) {}

  ImportResult Run(absl::string_view text) {
    std::vector<SourceNote> notes;
    const std::vector<LogicalLine> lines =
        SplitLogicalLines(text, language_, fixed_form_, &notes);
    for (size_t i = 0; i < lines.size(); ++i) {
      const LogicalLine& line = lines[i];
      if (!preprocessor_.Feed(line, &notes)) {
        if (preprocessor_.skipping()) WarnOfSkippedDirectives(line, notes);
        continue;
      }
      if (language_ == Language::kFortran) {
        OnFortranLine(line, i, notes);
      } else if (IsPreprocessorLine(line)) {  // #pragma
        OnDirectiveLine(preprocessor_.Expand(line, AfterPragma(line.text)));
      } else {
        for (const LinePiece& piece : SplitEmbeddedDirectives(line)) {
          if (piece.directive) {
            OnDirectiveLine(
                preprocessor_.Expand(piece.line, AfterPragma(piece.line.text)));
          } else {
            OnCode(piece.line, i);
          }
        }
      }
    }
    FailPending();
    for (const Region& r : regions_) {
      AddError(r.location,
               "begin declare variant is never closed by "
               "end declare variant");
    }
    for (const SourceNote& n : notes) {
      result_.warnings.push_back(
          {{file_, n.position.line, n.position.column}, n.message});
    }
    auto by_position = [](const auto& a, const auto& b) {
      return std::make_pair(a.location.line, a.location.column) <
             std::make_pair(b.location.line, b.location.column);
    };
    std::stable_sort(result_.errors.begin(), result_.errors.end(), by_position);
    std::stable_sort(result_.warnings.begin(), result_.warnings.end(),
                     by_position);
    return std::move(result_);
  }

 private:
  bool IsPreprocessorLine(const LogicalLine& line) const {
    absl::string_view t = absl::StripLeadingAsciiWhitespace(line.text);
    return language_ == Language::kC ? absl::StartsWith(t, "#")
                                     : absl::StartsWith(t, "!$");
  }

  // A directive in a branch the compiler does not read is not imported, as
  // the compiler does not see it either; but the user is told, since a
  // wrapper header can hide most of its variants that way.
  void WarnOfSkippedDirectives(const LogicalLine& line,
                               std::vector<SourceNote>& notes) {
    std::vector<LogicalLine> directives;
    if (language_ == Language::kFortran || IsPreprocessorLine(line)) {
      directives.push_back(line);
    } else {
      for (const LinePiece& piece : SplitEmbeddedDirectives(line)) {
        if (piece.directive) directives.push_back(piece.line);
      }
    }
    for (const LogicalLine& text : directives) {
      std::optional<OmpDirective> d = ParseOmpDirective(text, language_);
      if (!d.has_value() || d->kind == DirectiveKind::kOther) continue;
      notes.push_back(
          {text.PositionOf(d->offset),
           absl::StrCat("directive not read: it is in a branch the compiler "
                        "skips (",
                        preprocessor_.WhySkipping(),
                        "; --define/--undefine choose the branch)")});
    }
  }

  void OnDirectiveLine(const LogicalLine& line) {
    std::optional<OmpDirective> d = ParseOmpDirective(line, language_);
    if (d.has_value() && d->kind != DirectiveKind::kOther) {
      OnDirective(line, *d);
    }
  }

  void OnFortranLine(const LogicalLine& line, size_t index,
                     std::vector<SourceNote>& notes) {
    absl::StatusOr<LogicalLine> translated = TranslateFortranExpressions(line);
    if (!translated.ok()) {
      std::optional<OmpDirective> d = ParseOmpDirective(line, language_);
      if (d.has_value() && d->kind != DirectiveKind::kOther) {
        if (d->error.ok()) d->error = translated.status();
        OnDirective(line, *d);
      }
      return;
    }
    std::optional<OmpDirective> d = ParseOmpDirective(*translated, language_);
    if (d.has_value()) {
      if (d->kind != DirectiveKind::kOther) OnDirective(*translated, *d);
      return;
    }
    if (IsPreprocessorLine(line)) return;
    const absl::string_view t = absl::StripLeadingAsciiWhitespace(line.text);
    if (!fixed_form_ && IsFixedSentinelInFreeForm(t)) {
      notes.push_back({line.PositionOf(line.text.size() - t.size()),
                       "a fixed-form directive sentinel in a free-form "
                       "source is not read (fixed form is for .f, .for, "
                       ".ftn or --fortran_form=fixed)"});
    }
    fortran_.Feed(line);
    (void)index;
  }

  SourceLocation Where(const LogicalLine& line, size_t offset) const {
    const Position p = line.PositionOf(offset);
    return {file_, p.line, p.column};
  }

  // `status` holds "L:C: message".
  void AddError(const absl::Status& status, const std::string& kernel = "") {
    std::vector<absl::string_view> parts =
        absl::StrSplit(status.message(), absl::MaxSplits(':', 2));
    SourceLocation where{file_, 0, 0};
    if (parts.size() == 3 && absl::SimpleAtoi(parts[0], &where.line) &&
        absl::SimpleAtoi(parts[1], &where.column)) {
      AddError(where, absl::StripLeadingAsciiWhitespace(parts[2]), kernel);
    } else {
      AddError(where, status.message(), kernel);
    }
  }
  void AddError(const SourceLocation& where, absl::string_view message,
                const std::string& kernel = "") {
    result_.errors.push_back({where, std::string(message), kernel});
  }

  void OnDirective(const LogicalLine& line, const OmpDirective& d) {
    if (d.kind != DirectiveKind::kDeclareVariant) FailPending();
    switch (d.kind) {
      case DirectiveKind::kDeclareVariant:
        return OnDeclareVariant(line, d);
      case DirectiveKind::kBeginDeclareVariant:
        return OnBegin(line, d);
      case DirectiveKind::kEndDeclareVariant:
        return OnEnd(line, d);
      case DirectiveKind::kMetadirective:
      case DirectiveKind::kBeginMetadirective:
        if (!d.error.ok()) return AddError(d.error);
        return OnMetadirective(line, d);
      case DirectiveKind::kEndMetadirective:
      case DirectiveKind::kOther:
        return;
    }
  }

  // The effective selector of `own` inside the open regions.
  absl::StatusOr<Selector> Effective(const LogicalLine& line, size_t offset,
                                     const Selector& own) const {
    if (regions_.empty()) return own;
    if (!regions_.back().effective) {
      return ErrorAt(line, offset,
                     "enclosing begin declare variant is invalid");
    }
    absl::StatusOr<Selector> s =
        EffectiveSelector(own, *regions_.back().effective);
    if (s.ok()) return s;
    // Text 0 is `own`; text k the k-th enclosing region's (selector_error.h).
    std::vector<SelectorOrigin> origins = {{&line, offset}};
    for (auto r = regions_.rbegin(); r != regions_.rend(); ++r) {
      origins.push_back({&r->line, r->match_offset});
    }
    return RebaseSelectorError(s.status(), origins);
  }

  std::vector<std::string> EnclosingTexts() const {
    return regions_.empty() ? std::vector<std::string>{}
                            : regions_.back().texts;
  }

  void OnDeclareVariant(const LogicalLine& line, const OmpDirective& d) {
    ImportedVariant v;
    v.directive = Directive::kDeclareVariant;
    v.location = Where(line, d.offset);
    absl::Status status = ReadDeclareVariant(line, d, v);
    if (language_ == Language::kFortran) {
      if (!status.ok()) return AddError(status, v.base);
      result_.variants.push_back(std::move(v));
    } else if (!scanner_.at_declaration_scope()) {
      AddError(status.ok() ? ErrorAt(line, d.offset,
                                     "declare variant inside a function body")
                           : status);
    } else {
      pending_.push_back({std::move(v), std::move(status)});
    }
  }

  // Fills `v` from the directive: names (Fortran: the base too, even when
  // the rest is invalid, so the error names its kernel), then clauses.
  absl::Status ReadDeclareVariant(const LogicalLine& line,
                                  const OmpDirective& d, ImportedVariant& v) {
    absl::Status names = SetNames(line, d, v);
    if (!d.error.ok()) return d.error;
    if (!names.ok()) return names;
    CTXSEL_ASSIGN_OR_RETURN(VariantClauses clauses,
                            ReadVariantClauses(line, d, "declare variant"));
    const OmpClause& match = *clauses.match;
    CTXSEL_ASSIGN_OR_RETURN(
        Selector own,
        ParseSelectorAt(line, match.argument, match.argument_offset,
                        Directive::kDeclareVariant));
    CTXSEL_ASSIGN_OR_RETURN(Selector effective,
                            Effective(line, match.argument_offset, own));
    v.selector = effective.ToString();
    v.selector_text = std::string(absl::StripAsciiWhitespace(match.argument));
    v.enclosing_selector_texts = EnclosingTexts();
    v.adjust_args = std::move(clauses.adjust_args);
    v.append_args = std::move(clauses.append_args);
    return absl::OkStatus();
  }

  // Sets v.variant, and v.base when the directive names it (Fortran).
  absl::Status SetNames(const LogicalLine& line, const OmpDirective& d,
                        ImportedVariant& v) {
    absl::string_view arg = d.argument;
    size_t colon = language_ == Language::kFortran ? FindTopLevel(arg, ':')
                                                   : absl::string_view::npos;
    if (colon != absl::string_view::npos) {
      v.base = std::string(absl::StripAsciiWhitespace(arg.substr(0, colon)));
      arg = arg.substr(colon + 1);
    } else if (language_ == Language::kFortran) {
      v.base = fortran_.current_procedure();
      if (v.base.empty()) {
        return ErrorAt(
            line, d.offset,
            "declare variant without base-proc-name outside a procedure");
      }
    }
    v.variant = std::string(absl::StripAsciiWhitespace(arg));
    if (v.variant.empty() ||
        (colon != absl::string_view::npos && v.base.empty())) {
      return ErrorAt(line, d.argument_offset,
                     "declare variant needs ([base-name:]variant-name)");
    }
    for (const std::string* name : {&v.base, &v.variant}) {
      if (name->empty() || IsFunctionName(*name)) continue;
      return ErrorAt(line, d.argument_offset,
                     absl::StrCat("'", *name,
                                  "' is not a function name: declare variant "
                                  "needs ([base-name:]variant-name)"));
    }
    return absl::OkStatus();
  }

  // A variant-name or base-name (OpenMP 5.1 §2.3.5): an identifier; in C++
  // a qualified one (`ns::f`, `::f`), which may end in a template argument
  // list (`f<float>`). Never an expression such as `1 + 2` or `f()`.
  bool IsFunctionName(absl::string_view name) const {
    if (language_ == Language::kFortran) return text_scan::IsIdentifier(name);
    if (!name.empty() && name.back() == '>') {
      const size_t open = name.find('<');
      if (open == absl::string_view::npos || open == 0) return false;
      name = absl::StripTrailingAsciiWhitespace(name.substr(0, open));
    }
    if (absl::StartsWith(name, "::")) name.remove_prefix(2);
    for (absl::string_view part : absl::StrSplit(name, "::")) {
      if (!text_scan::IsIdentifier(absl::StripAsciiWhitespace(part))) {
        return false;
      }
    }
    return true;
  }

  void OnBegin(const LogicalLine& line, const OmpDirective& d) {
    Region region;
    region.location = Where(line, d.offset);
    region.texts = EnclosingTexts();
    if (language_ == Language::kFortran) {
      AddError(region.location, "begin declare variant is C/C++ only");
      return;
    }
    absl::StatusOr<VariantClauses> clauses =
        d.error.ok() ? ReadVariantClauses(line, d, "begin declare variant")
                     : absl::StatusOr<VariantClauses>(d.error);
    if (!clauses.ok()) {
      // Still a region: its `end` pairs with it, its definitions are
      // reported as skipped.
      AddError(clauses.status());
    } else {
      const OmpClause& match = *clauses->match;
      region.texts.push_back(
          std::string(absl::StripAsciiWhitespace(match.argument)));
      region.line = line;
      region.match_offset = match.argument_offset;
      absl::StatusOr<Selector> own =
          ParseSelectorAt(line, match.argument, match.argument_offset,
                          Directive::kBeginDeclareVariant);
      absl::StatusOr<Selector> effective =
          own.ok() ? Effective(line, match.argument_offset, *own) : own;
      if (effective.ok()) {
        region.effective = *std::move(effective);
      } else if (regions_.empty() || regions_.back().effective) {
        AddError(effective.status());  // not again for each nested region
      }
    }
    regions_.push_back(std::move(region));
  }

  void OnEnd(const LogicalLine& line, const OmpDirective& d) {
    if (regions_.empty()) {
      return AddError(Where(line, d.offset),
                      "end declare variant without a matching begin declare "
                      "variant");
    }
    regions_.pop_back();
  }

  void OnMetadirective(const LogicalLine& line, const OmpDirective& d) {
    absl::StatusOr<MetadirectiveClauses> clauses =
        ReadMetadirectiveClauses(line, d);
    if (!clauses.ok()) return AddError(clauses.status());
    ImportedMetadirective m;
    m.function = language_ == Language::kC ? scanner_.current_function()
                                           : fortran_.current_procedure();
    m.begin = d.kind == DirectiveKind::kBeginMetadirective;
    for (auto& when : clauses->when) {
      m.when.push_back({when.selector.ToString(), std::move(when.selector_text),
                        std::move(when.directive), Where(line, when.offset)});
    }
    m.otherwise = std::move(clauses->otherwise);
    m.otherwise_clause = std::move(clauses->otherwise_clause);
    m.location = Where(line, d.offset);
    result_.metadirectives.push_back(std::move(m));
  }

  void OnCode(const LogicalLine& line, size_t index) {
    for (const CodeEvent& e : scanner_.Feed(line, index)) {
      const SourceLocation at{file_, e.position.line, e.position.column};
      if (e.kind == CodeEvent::kOtherDeclaration) {
        FailPending();
        continue;
      }
      if (e.kind == CodeEvent::kScope) {
        for (const Pending& p : pending_) {
          AddError(p.variant.location,
                   absl::StrCat("declare variant must precede a function "
                                "declaration or definition, not ",
                                e.not_a_base, " (line ", at.line, ")"));
        }
        pending_.clear();
        continue;
      }
      if (!e.not_a_base.empty()) {
        const std::string why = absl::StrCat(
            e.name, " is ", e.not_a_base, ", which cannot be a base function");
        for (const Pending& p : pending_) {
          AddError(p.variant.location, absl::StrCat("declare variant: ", why,
                                                    " (line ", at.line, ")"));
        }
        pending_.clear();
        if (e.kind == CodeEvent::kFunctionDefinition && InRegion()) {
          AddError(at, absl::StrCat("begin declare variant: ", why));
        }
        continue;
      }
      for (Pending& p : pending_) {
        if (!p.error.ok()) {
          AddError(p.error, e.name);
          continue;
        }
        p.variant.base = e.name;
        result_.variants.push_back(std::move(p.variant));
      }
      pending_.clear();
      if (e.kind == CodeEvent::kFunctionDefinition && InRegion()) {
        if (regions_.back().effective) {
          AddRegionVariant(e);
        } else {
          AddError(at,
                   absl::StrCat("definition of ", e.name,
                                " is skipped: its begin declare variant (line ",
                                regions_.back().location.line, ") is invalid"),
                   e.name);
        }
      }
    }
  }

  bool InRegion() const { return !regions_.empty(); }

  // A C (not C++) source: `.c` (`.C` is C++, as for GCC).
  bool IsC() const {
    return language_ == Language::kC && absl::EndsWith(file_, ".c");
  }

  void AddRegionVariant(const CodeEvent& e) {
    const Region& region = regions_.back();
    ImportedVariant v;
    v.base = e.name;
    v.variant = VariantSymbolName(e.name, *region.effective);
    v.directive = Directive::kBeginDeclareVariant;
    v.selector = region.effective->ToString();
    v.selector_text = region.texts.back();
    v.enclosing_selector_texts.assign(region.texts.begin(),
                                      region.texts.end() - 1);
    v.location = {file_, e.position.line, e.position.column};
    // Two definitions of one function under equivalent selectors are one
    // symbol defined twice: the compiler refuses the file.
    // C has no overloads; in C++ the same parameter tokens are the same
    // function (parameters renamed are missed, never a false alarm).
    const auto [first, inserted] = region_definitions_.emplace(
        IsC() ? v.variant : absl::StrCat(v.variant, "(", e.parameters, ")"),
        v.location.line);
    if (!inserted) {
      return AddError(v.location,
                      absl::StrCat("redefinition of ", e.name,
                                   " under an equivalent begin declare "
                                   "variant selector (first defined at line ",
                                   first->second, ")"),
                      e.name);
    }
    result_.variants.push_back(std::move(v));
  }

  void FailPending() {
    for (const Pending& p : pending_) {
      if (!p.error.ok()) {
        AddError(p.error);
        continue;
      }
      AddError(p.variant.location,
               "declare variant is not followed by a function declaration or "
               "definition");
    }
    pending_.clear();
  }

  std::string file_;
  Language language_;
  bool fixed_form_;
  Preprocessor preprocessor_;
  CodeScanner scanner_;
  FortranScopes fortran_;
  std::vector<Region> regions_;
  std::vector<Pending> pending_;
  // Region definitions so far: "symbol(parameters)" -> line.
  absl::flat_hash_map<std::string, int> region_definitions_;
  ImportResult result_;
};

}  // namespace

std::string SourceLocation::ToString() const {
  return absl::StrCat(file, ":", line, ":", column);
}

std::string ImportError::ToString() const {
  return absl::StrCat(location.ToString(), ": ", message);
}

std::string ImportWarning::ToString() const {
  return absl::StrCat(location.ToString(), ": warning: ", message);
}

ImportResult ImportVariants(absl::string_view file_name, absl::string_view text,
                            const ImportOptions& options) {
  return Importer(file_name, options).Run(text);
}

ImportResult ImportVariants(absl::string_view file_name, absl::string_view text,
                            Language language) {
  ImportOptions options;
  options.language = language;
  return ImportVariants(file_name, text, options);
}

}  // namespace ctxsel::pragma
