#include "base/flags_usage.h"

#include <string>

#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/version.h"

namespace ctxsel {
namespace {

// ctxsel's flags are defined in its own sources, named relative to the
// workspace ("server/server_main.cc", "client/credentials.cc"); Abseil's
// come from its installed headers and sources ("./absl/flags/parse.cc" in
// Debian's build).
bool OwnFlags(absl::string_view file) {
  absl::ConsumePrefix(&file, "./");
  return !absl::StartsWith(file, "/") && !absl::StartsWith(file, "absl/");
}

}  // namespace

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
