// ctxsel-cli import [--define=...] [--undefine=...] [--fortran_form=...]
// FILE...: the variants declared in C, C++ and Fortran sources (declare
// variant, begin/end declare variant, metadirective), as JSON on stdout.
// Errors and warnings (constructs read past, source_import.h) go to stderr
// as file:line:column and are also in the JSON; the exit code is 2 when
// there is any error.
#include <cstdio>
#include <string>
#include <vector>

#include "client/cli/command.h"
#include "client/cli/input_file.h"
#include "client/cli/json_output.h"
#include "client/cli/source_import.h"
#include "nlohmann/json.hpp"
#include "selector/pragma/importer.h"
#include "selector/selector.h"

namespace ctxsel::cli {
namespace {

using nlohmann::json;

json Location(const pragma::SourceLocation& l) {
  return {{"file", l.file}, {"line", l.line}, {"column", l.column}};
}

json VariantJson(const pragma::ImportedVariant& v) {
  json adjust = json::array();
  for (const pragma::AdjustArgs& a : v.adjust_args) {
    adjust.push_back({{"op", a.op}, {"args", a.args}});
  }
  json append = json::array();
  for (const auto& types : v.append_args)
    append.push_back({{"interop", types}});
  return {{"base", v.base},
          {"variant", v.variant},
          {"directive", std::string(selector::DirectiveName(v.directive))},
          {"selector", v.selector},
          {"selector_text", v.selector_text},
          {"enclosing_selectors", v.enclosing_selector_texts},
          {"adjust_args", adjust},
          {"append_args", append},
          {"location", Location(v.location)}};
}

json MetadirectiveJson(const pragma::ImportedMetadirective& m) {
  json when = json::array();
  for (const pragma::MetadirectiveWhen& w : m.when) {
    when.push_back({{"selector", w.selector},
                    {"selector_text", w.selector_text},
                    {"directive", w.directive},
                    {"location", Location(w.location)}});
  }
  json out = {{"function", m.function},
              {"begin", m.begin},
              {"when", when},
              {"location", Location(m.location)}};
  out["otherwise"] = m.otherwise ? json(*m.otherwise) : json(nullptr);
  if (m.otherwise) out["otherwise_clause"] = m.otherwise_clause;
  return out;
}

int RunImport(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError(kImportCommand);
  absl::StatusOr<pragma::ImportOptions> options = ImportOptionsFromFlags();
  if (!options.ok()) {
    std::fprintf(stderr, "ctxsel-cli import: %s\n",
                 std::string(options.status().message()).c_str());
    return kExitBadInput;
  }
  absl::StatusOr<std::vector<std::string>> images = FromBinaryImages();
  if (!images.ok()) {
    std::fprintf(stderr, "ctxsel-cli import: %s\n",
                 std::string(images.status().message()).c_str());
    return kExitBadInput;
  }
  json variants = json::array(), metadirectives = json::array(),
       errors = json::array(), warnings = json::array();
  for (const std::string& path : args) {
    absl::StatusOr<pragma::ImportResult> r = ImportSourceFile(path, *options);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: cannot read the file\n", path.c_str());
      errors.push_back(
          {{"location", {{"file", path}, {"line", 0}, {"column", 0}}},
           {"message", "cannot read the file"}});
      continue;
    }
    for (const auto& v : r->variants) variants.push_back(VariantJson(v));
    for (const auto& m : r->metadirectives) {
      metadirectives.push_back(MetadirectiveJson(m));
    }
    for (const pragma::ImportError& e : r->errors) {
      std::fprintf(stderr, "%s\n", e.ToString().c_str());
      json error = {{"location", Location(e.location)}, {"message", e.message}};
      if (!e.kernel.empty()) error["kernel"] = e.kernel;
      errors.push_back(error);
    }
    for (const pragma::ImportWarning& w : r->warnings) {
      std::fprintf(stderr, "%s\n", w.ToString().c_str());
      warnings.push_back(
          {{"location", Location(w.location)}, {"message", w.message}});
    }
  }
  json out = {{"variants", variants},
              {"metadirectives", metadirectives},
              {"errors", errors},
              {"warnings", warnings}};
  // A variants file (--variants_file) records them with every variant.
  if (!images->empty()) out["images"] = *images;
  if (!PrintJsonDocument(out)) std::printf("%s\n", out.dump(2).c_str());
  return errors.empty() ? kExitOk : kExitBadInput;
}

}  // namespace

const Command kImportCommand = {
    "import",
    "import [--define=NAME[=VALUE],...] [--undefine=NAME,...] "
    "[--fortran_form=auto|fixed|free] [--from_binary=APP] FILE...",
    "Variants declared in C/C++/Fortran sources, as JSON.", RunImport};

}  // namespace ctxsel::cli
