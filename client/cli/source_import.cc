#include "client/cli/source_import.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/cli/input_file.h"

ABSL_FLAG(std::vector<std::string>, define, {},
          "import, variants register --from_source: NAME[=VALUE],... as "
          "with -D, for #if and for macros in directives.");
ABSL_FLAG(std::vector<std::string>, undefine, {},
          "import, variants register --from_source: NAME,... as with -U "
          "(applied after --define; -U _OPENMP too).");
ABSL_FLAG(std::string, fortran_form, "auto",
          "import, variants register --from_source: auto (fixed form for "
          ".f .for .ftn), fixed or free.");

namespace ctxsel::cli {

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
  absl::StatusOr<std::string> text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return pragma::ImportVariants(path, *text, options);
}

}  // namespace ctxsel::cli
