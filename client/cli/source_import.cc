#include "client/cli/source_import.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "client/cli/input_file.h"
#include "images/binary_file.h"

ABSL_FLAG(std::vector<std::string>, define, {},
          "import, variants register --from_source: NAME[=VALUE],... as "
          "with -D, for #if and for macros in directives.");
ABSL_FLAG(std::vector<std::string>, undefine, {},
          "import, variants register --from_source: NAME,... as with -U "
          "(applied after --define; -U _OPENMP too).");
ABSL_FLAG(std::string, from_binary, "",
          "variants register, import: the device images this executable or "
          "shared object carries, recorded with the variants "
          "(docs/binaries.md): the kernel is then placed only where one runs.");
ABSL_FLAG(std::string, fortran_form, "auto",
          "import, variants register --from_source: auto (fixed form for "
          ".f .for .ftn), fixed or free.");

namespace ctxsel::cli {
namespace {

v1::Variant FromImported(const pragma::ImportedVariant& imported) {
  v1::Variant v;
  v.set_name(imported.variant);
  v.set_selector(imported.selector);
  v1::VariantMetadata* m = v.mutable_metadata();
  for (const pragma::AdjustArgs& a : imported.adjust_args) {
    m->add_adjust_args(absl::StrCat(a.op, ": ", absl::StrJoin(a.args, ", ")));
  }
  for (const std::vector<std::string>& types : imported.append_args) {
    m->add_append_args(
        absl::StrCat("interop(", absl::StrJoin(types, ", "), ")"));
  }
  m->set_source_file(imported.location.file);
  m->set_source_line(imported.location.line);
  return v;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FromBinaryImages() {
  const std::string binary = absl::GetFlag(FLAGS_from_binary);
  if (binary.empty()) return std::vector<std::string>();
  absl::StatusOr<std::vector<std::string>> ids = images::ReadImageIds(binary);
  if (!ids.ok()) {
    return absl::Status(
        ids.status().code(),
        absl::StrCat("--from_binary: ", ids.status().message()));
  }
  return ids;
}

absl::StatusOr<pragma::ImportOptions> ImportOptionsFromFlags() {
  pragma::ImportOptions options;
  for (const std::string& d : absl::GetFlag(FLAGS_define)) {
    const size_t eq = d.find('=');
    const std::string name = d.substr(0, eq);
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--define: '", d, "' is not NAME[=VALUE]"));
    }
    options.defines[name] = eq == std::string::npos ? "1" : d.substr(eq + 1);
  }
  options.undefines = absl::GetFlag(FLAGS_undefine);
  const std::string form = absl::GetFlag(FLAGS_fortran_form);
  if (form == "fixed" || form == "free") {
    options.fixed_form = form == "fixed";
  } else if (form != "auto") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fortran_form: '", form, "' is not auto, fixed or free"));
  }
  return options;
}

absl::StatusOr<pragma::ImportResult> ImportSourceFile(
    const std::string& path, const pragma::ImportOptions& options) {
  CTXSEL_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path));
  return pragma::ImportVariants(path, text, options);
}

absl::StatusOr<SourceImport> ImportSources(
    const std::vector<std::string>& files) {
  CTXSEL_ASSIGN_OR_RETURN(pragma::ImportOptions options,
                          ImportOptionsFromFlags());
  SourceImport out;
  for (const std::string& file : files) {
    absl::StatusOr<pragma::ImportResult> result =
        ImportSourceFile(file, options);
    if (!result.ok()) {
      out.errors.push_back(absl::StrCat(file, ": ", result.status().message()));
      continue;
    }
    for (const pragma::ImportWarning& w : result->warnings) {
      std::fprintf(stderr, "%s\n", w.ToString().c_str());
    }
    for (const pragma::ImportError& e : result->errors) {
      out.errors.push_back(e.ToString());
      if (!e.kernel.empty()) out.skipped.insert(e.kernel);
    }
    for (const pragma::ImportedVariant& v : result->variants) {
      out.batches[v.base].push_back(FromImported(v));
    }
  }
  for (const std::string& kernel : out.skipped) out.batches.erase(kernel);
  return out;
}

}  // namespace ctxsel::cli
