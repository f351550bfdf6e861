#include "selector/pragma/importer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "selector/pragma/clauses.h"
#include "selector/pragma/code_scanner.h"
#include "selector/pragma/directive.h"
#include "selector/pragma/symbol_name.h"

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
};

class Importer {
 public:
  Importer(absl::string_view file, Language language)
      : file_(file), language_(language) {}

  ImportResult Run(absl::string_view text) {
    const std::vector<LogicalLine> lines = SplitLogicalLines(text, language_);
    for (size_t i = 0; i < lines.size(); ++i) {
      absl::StatusOr<std::optional<OmpDirective>> d =
          ParseOmpDirective(lines[i], language_);
      if (!d.ok()) {
        AddError(d.status());
      } else if (d->has_value() && (*d)->kind != DirectiveKind::kOther) {
        OnDirective(lines[i], **d);
      } else if (!d->has_value() && !IsPreprocessorLine(lines[i])) {
        OnCode(lines[i], i);
      }
    }
    FailPending();
    for (const Region& r : regions_) {
      AddError(r.location,
               "begin declare variant is never closed by "
               "end declare variant");
    }
    std::stable_sort(
        result_.errors.begin(), result_.errors.end(),
        [](const ImportError& a, const ImportError& b) {
          return std::make_pair(a.location.line, a.location.column) <
                 std::make_pair(b.location.line, b.location.column);
        });
    return std::move(result_);
  }

 private:
  bool IsPreprocessorLine(const LogicalLine& line) const {
    absl::string_view t = absl::StripLeadingAsciiWhitespace(line.text);
    return language_ == Language::kC ? absl::StartsWith(t, "#")
                                     : absl::StartsWith(t, "!$");
  }

  SourceLocation Where(const LogicalLine& line, size_t offset) const {
    const Position p = line.PositionOf(offset);
    return {file_, p.line, p.column};
  }

  // `status` holds "L:C: message".
  void AddError(const absl::Status& status) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(status.message(), absl::MaxSplits(':', 2));
    SourceLocation where{file_, 0, 0};
    if (parts.size() == 3 && absl::SimpleAtoi(parts[0], &where.line) &&
        absl::SimpleAtoi(parts[1], &where.column)) {
      AddError(where, absl::StripLeadingAsciiWhitespace(parts[2]));
    } else {
      AddError(where, status.message());
    }
  }
  void AddError(const SourceLocation& where, absl::string_view message) {
    result_.errors.push_back({where, std::string(message)});
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
    absl::StatusOr<VariantClauses> clauses =
        ReadVariantClauses(line, d, "declare variant");
    if (!clauses.ok()) return AddError(clauses.status());
    const OmpClause& match = *clauses->match;
    absl::StatusOr<Selector> own =
        ParseSelectorAt(line, match.argument, match.argument_offset,
                        Directive::kDeclareVariant);
    if (!own.ok()) return AddError(own.status());
    absl::StatusOr<Selector> effective =
        Effective(line, match.argument_offset, *own);
    if (!effective.ok()) return AddError(effective.status());

    ImportedVariant v;
    v.directive = Directive::kDeclareVariant;
    v.selector = effective->ToString();
    v.selector_text = std::string(absl::StripAsciiWhitespace(match.argument));
    v.enclosing_selector_texts = EnclosingTexts();
    v.adjust_args = std::move(clauses->adjust_args);
    v.append_args = std::move(clauses->append_args);
    v.location = Where(line, d.offset);
    if (!SetNames(line, d, v)) return;
    if (!v.base.empty()) {
      result_.variants.push_back(std::move(v));
    } else if (language_ == Language::kC && !scanner_.at_declaration_scope()) {
      AddError(v.location, "declare variant inside a function body");
    } else {
      pending_.push_back({std::move(v)});
    }
  }

  // Sets v.variant, and v.base when the directive names it (Fortran).
  bool SetNames(const LogicalLine& line, const OmpDirective& d,
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
        AddError(v.location,
                 "declare variant without base-proc-name outside a procedure");
        return false;
      }
    }
    v.variant = std::string(absl::StripAsciiWhitespace(arg));
    if (v.variant.empty() ||
        (colon != absl::string_view::npos && v.base.empty())) {
      AddError(Where(line, d.argument_offset),
               "declare variant needs ([base-name:]variant-name)");
      return false;
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
        ReadVariantClauses(line, d, "begin declare variant");
    if (!clauses.ok()) {
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
    if (language_ == Language::kFortran) return fortran_.Feed(line);
    for (const CodeEvent& e : scanner_.Feed(line, index)) {
      if (e.kind == CodeEvent::kOtherDeclaration) {
        FailPending();
        continue;
      }
      for (Pending& p : pending_) {
        p.variant.base = e.name;
        result_.variants.push_back(std::move(p.variant));
      }
      pending_.clear();
      if (e.kind == CodeEvent::kFunctionDefinition && !regions_.empty() &&
          regions_.back().effective) {
        AddRegionVariant(line, e);
      }
    }
  }

  void AddRegionVariant(const LogicalLine& line, const CodeEvent& e) {
    const Region& region = regions_.back();
    ImportedVariant v;
    v.base = e.name;
    v.variant = VariantSymbolName(e.name, *region.effective);
    v.directive = Directive::kBeginDeclareVariant;
    v.selector = region.effective->ToString();
    v.selector_text = region.texts.back();
    v.enclosing_selector_texts.assign(region.texts.begin(),
                                      region.texts.end() - 1);
    v.location = Where(line, e.offset);
    result_.variants.push_back(std::move(v));
  }

  void FailPending() {
    for (const Pending& p : pending_) {
      AddError(p.variant.location,
               "declare variant is not followed by a function declaration or "
               "definition");
    }
    pending_.clear();
  }

  std::string file_;
  Language language_;
  CodeScanner scanner_;
  FortranScopes fortran_;
  std::vector<Region> regions_;
  std::vector<Pending> pending_;
  ImportResult result_;
};

}  // namespace

std::string SourceLocation::ToString() const {
  return absl::StrCat(file, ":", line, ":", column);
}

std::string ImportError::ToString() const {
  return absl::StrCat(location.ToString(), ": ", message);
}

ImportResult ImportVariants(absl::string_view file_name,
                            absl::string_view text) {
  return ImportVariants(file_name, text, LanguageOf(file_name));
}

ImportResult ImportVariants(absl::string_view file_name, absl::string_view text,
                            Language language) {
  return Importer(file_name, language).Run(text);
}

}  // namespace ctxsel::pragma
