// importer.h: variants declared in C, C++ and Fortran sources.
//
// People already write their variants as OpenMP directives. ImportVariants()
// reads the text of one source file (no I/O: the caller reads the file) and
// returns what it declares:
//   * `declare variant(v) match(...)` (several may stack before one base
//     function; Fortran `!$omp declare variant([base:]v) match(...)`),
//   * function definitions between `begin declare variant match(...)` and
//     `end declare variant`, nested, each with its effective selector (the
//     outer selectors appended, OpenMP 5.1 §2.3.5) and a deterministic
//     symbol name (symbol_name.h),
//   * `metadirective when(selector: directive) ... otherwise(directive)`
//     (or the older `default(directive)`): an ordered list of directive
//     variants, the first one winning on equal scores.
// `adjust_args` and `append_args` are kept, because a launcher must pass
// arguments accordingly. Comments, string literals and continuation lines
// (free- and fixed-form Fortran too) are handled by source_text.h; `#if`
// branches and macros by preprocessor.h; `_Pragma("omp ...")` and
// `[[omp::directive(...)]]` by embedded.h. Base functions get their
// qualified names (`ns::Class::f`); a directive before anything that cannot
// be a base (a namespace, a class, a constructor, several declarators) is
// an error.
//
// Errors are collected, not fatal: each names file:line:column (and the
// kernel it concerns when known), and the variants found elsewhere in the
// file are still returned. Constructs that are read past are warnings, and
// so is every directive in a branch the preprocessor skips (with the
// condition that hides it).
//
// Example:
//
//   ImportResult r = ImportVariants("saxpy.c", text);
//   for (const ImportError& e : r.errors) std::cerr << e.ToString() << "\n";
//   for (const ImportedVariant& v : r.variants) {
//     // v.base == "base_saxpy", v.variant == "avx512_saxpy",
//     // v.selector == canonical "device={isa(\"core-avx512\")}"
//   }
#ifndef CTXSEL_SELECTOR_PRAGMA_IMPORTER_H_
#define CTXSEL_SELECTOR_PRAGMA_IMPORTER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "selector/pragma/source_text.h"
#include "selector/selector.h"

namespace ctxsel::pragma {

struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string ToString() const;  // "file:line:column"
};

// `adjust_args(op: args...)`; op is "nothing" or "need_device_ptr".
struct AdjustArgs {
  std::string op;
  std::vector<std::string> args;
};

// A function variant of a base function.
struct ImportedVariant {
  std::string base;     // base function (qualified as written, `ns::f`)
  std::string variant;  // the named variant, or for begin/end declare
                        // variant definitions their symbol name
  // kDeclareVariant or kBeginDeclareVariant (a definition in a region).
  selector::Directive directive = selector::Directive::kDeclareVariant;
  std::string selector;       // canonical effective selector
  std::string selector_text;  // this directive's own match(...) text
  // match(...) texts of the enclosing begin declare variant regions,
  // outermost first; empty when not nested.
  std::vector<std::string> enclosing_selector_texts;
  std::vector<AdjustArgs> adjust_args;
  // One entry per `interop(...)` of append_args, its interop types in order.
  std::vector<std::vector<std::string>> append_args;
  SourceLocation location;  // the directive (or, in a region, the definition)
};

// One `when(selector: directive)` clause of a metadirective.
struct MetadirectiveWhen {
  std::string selector;       // canonical
  std::string selector_text;  // as written
  std::string directive;      // directive variant; "" means `nothing`
  SourceLocation location;    // of the `when`
};

// A metadirective: its when clauses in source order; on equal scores the
// first one wins. No otherwise/default clause means `otherwise(nothing)`.
struct ImportedMetadirective {
  std::string function;  // enclosing function ("" if not known)
  bool begin = false;    // `begin metadirective` (applies to a block)
  std::vector<MetadirectiveWhen> when;
  std::optional<std::string> otherwise;  // directive text ("" = nothing)
  std::string otherwise_clause;          // "otherwise" or "default"
  SourceLocation location;
};

struct ImportError {
  SourceLocation location;
  std::string message;
  // The base function (kernel) whose variants this error leaves incomplete,
  // so that a caller may register the other kernels; empty when unknown.
  std::string kernel;
  std::string ToString() const;  // "file:line:column: message"
};

// Something the importer read past or could not decide: a construct it does
// not support (`#include "x.h"`, a directive in a macro), an `#if` it could
// not evaluate, fixed-form text past column 72.
struct ImportWarning {
  SourceLocation location;
  std::string message;
  std::string ToString() const;  // "file:line:column: warning: message"
};

struct ImportResult {
  std::vector<ImportedVariant> variants;  // in source order
  std::vector<ImportedMetadirective> metadirectives;
  std::vector<ImportError> errors;      // in source order
  std::vector<ImportWarning> warnings;  // in source order
};

struct ImportOptions {
  std::optional<Language> language;  // default: LanguageOf(file name)
  std::optional<bool> fixed_form;    // Fortran; default: IsFixedFormName()
  // -DNAME[=VALUE] ("1" when no value) and -UNAME (applied after), for
  // `#if` and for macros in directives (preprocessor.h).
  std::map<std::string, std::string> defines;
  std::vector<std::string> undefines;
};

// Imports the variants of one source file.
ImportResult ImportVariants(absl::string_view file_name, absl::string_view text,
                            const ImportOptions& options = {});
ImportResult ImportVariants(absl::string_view file_name, absl::string_view text,
                            Language language);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_IMPORTER_H_
