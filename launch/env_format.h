// env_format.h: a launch environment written the way a launcher reads it.
//
// Launchers take the same variables in three spellings: a shell that
// `eval`s them wants quoted values; a Slurm TaskProlog's stdout, `docker
// --env-file` and systemd's `EnvironmentFile` take every character after
// the '=' literally, so a quote there would end up in the value. The
// literal formats therefore accept only values that need no quoting.
//
//   absl::StatusOr<EnvFormat> format = ParseEnvFormat("slurm");
//   absl::StatusOr<std::string> text = FormatEnv(env, *format);
//   // export CUDA_VISIBLE_DEVICES=GPU-8c5b4a1e-...
//
// Pure string functions: the environment itself comes from the server
// (SelectResponse.ranks[i].environment) or from LaunchEnv (launch_env.h).
#ifndef CTXSEL_LAUNCH_ENV_FORMAT_H_
#define CTXSEL_LAUNCH_ENV_FORMAT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "launch/launch_env.h"

namespace ctxsel::launch {

enum class EnvFormat {
  kShell,   // export NAME='value', for eval (ExportLines)
  kSlurm,   // export NAME=value, what a Slurm TaskProlog prints
  kDotenv,  // NAME=value, for docker --env-file and systemd EnvironmentFile
};

// "env", "slurm" or "dotenv"; INVALID_ARGUMENT naming the accepted ones.
absl::StatusOr<EnvFormat> ParseEnvFormat(absl::string_view name);

// True when `value` reads the same quoted or not in every format: only
// [A-Za-z0-9_.,:/@+=-] (an empty value too).
bool NeedsNoQuoting(absl::string_view value);

// One line per variable in `format`. INVALID_ARGUMENT naming the variable
// when a name is not [A-Za-z_][A-Za-z0-9_]*, or, in the literal formats, a
// value fails NeedsNoQuoting; nothing is written then.
absl::StatusOr<std::string> FormatEnv(const LaunchEnvironment& env,
                                      EnvFormat format);

}  // namespace ctxsel::launch

#endif  // CTXSEL_LAUNCH_ENV_FORMAT_H_
