#include "launch/env_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::launch {
namespace {

bool IsName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<EnvFormat> ParseEnvFormat(absl::string_view name) {
  if (name == "env") return EnvFormat::kShell;
  if (name == "slurm") return EnvFormat::kSlurm;
  if (name == "dotenv") return EnvFormat::kDotenv;
  return absl::InvalidArgumentError(absl::StrCat(
      "'", name, "' is not an environment format (env, slurm or dotenv)"));
}

bool NeedsNoQuoting(absl::string_view value) {
  constexpr absl::string_view kPunctuation = "_.,:/@+=-";
  for (char c : value) {
    if (!absl::ascii_isalnum(c) &&
        kPunctuation.find(c) == absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::string> FormatEnv(const LaunchEnvironment& env,
                                      EnvFormat format) {
  for (const auto& [name, value] : env) {
    if (!IsName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "' is not a variable name"));
    }
    if (format != EnvFormat::kShell && !NeedsNoQuoting(value)) {
      // Slurm and env files would keep the quotes as part of the value.
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": '", value,
                       "' needs quoting, which this format cannot express (use "
                       "--format=env)"));
    }
  }
  if (format == EnvFormat::kShell) return ExportLines(env);
  std::string out;
  const absl::string_view prefix = format == EnvFormat::kSlurm ? "export " : "";
  for (const auto& [name, value] : env) {
    absl::StrAppend(&out, prefix, name, "=", value, "\n");
  }
  return out;
}

}  // namespace ctxsel::launch
