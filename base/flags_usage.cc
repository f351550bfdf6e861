#include "base/flags_usage.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/version.h"

namespace ctxsel {
namespace {

// ctxsel's flags are defined in its own sources, named relative to the
// workspace ("server/server_main.cc", "client/cli/common_flags.cc"); Abseil's
// come from its installed headers and sources ("./absl/flags/parse.cc" in
// Debian's build).
bool OwnFlags(absl::string_view file) {
  absl::ConsumePrefix(&file, "./");
  return !absl::StartsWith(file, "/") && !absl::StartsWith(file, "absl/");
}

// True while ParseFlagsOrExit parses: Abseil's parser reports a usage
// error and calls exit(1), which this atexit handler turns into
// kExitUsage. Debian's Abseil (20220623) has no parser that returns errors.
bool parsing = false;

void ExitAsUsageError() {
  if (!parsing) return;
  std::fflush(nullptr);
  _exit(kExitUsage);
}

}  // namespace

std::vector<char*> ParseFlagsOrExit(int argc, char** argv) {
  namespace internal = absl::flags_internal;
  std::atexit(ExitAsUsageError);
  parsing = true;
  std::vector<char*> positional = internal::ParseCommandLineImpl(
      argc, argv, internal::ArgvListAction::kRemoveParsedArgs,
      internal::UsageFlagsAction::kIgnoreUsage,
      internal::OnUndefinedFlag::kAbortIfUndefined);
  parsing = false;
  // Abseil exits 1 after --help; asking for help is not a failure.
  if (internal::HandleUsageFlags(std::cout, absl::ProgramUsageMessage()) !=
      -1) {
    std::cout.flush();
    std::exit(0);
  }
  return positional;
}

void SetFlagsUsage(absl::string_view program) {
  absl::FlagsUsageConfig config;
  config.contains_helpshort_flags = OwnFlags;
  config.contains_help_flags = OwnFlags;
  config.version_string = [name = std::string(program)] {
    return absl::StrCat(name, " ", kVersion, "\n");
  };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace ctxsel
