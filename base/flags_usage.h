// flags_usage.h: what --help and --version print for ctxsel's programs.
//
// Abseil's default --help lists only flags defined in a file named after
// the program (ctxsel-server.cc, main.cc, ...), so ctxsel-server --help
// printed "No flags matched", and --version printed the build mode without
// a number. Called before absl::ParseCommandLine:
//
//   ctxsel::SetFlagsUsage("ctxsel-server");
//   absl::ParseCommandLine(argc, argv);
//   // --help: every flag defined in ctxsel's own sources (not Abseil's);
//   // --version: "ctxsel-server 0.1.0"
#ifndef CTXSEL_BASE_FLAGS_USAGE_H_
#define CTXSEL_BASE_FLAGS_USAGE_H_

#include "absl/strings/string_view.h"

namespace ctxsel {

void SetFlagsUsage(absl::string_view program);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_FLAGS_USAGE_H_
