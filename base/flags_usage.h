// flags_usage.h: what --help and --version print for ctxsel's programs.
//
// Abseil's default --help lists only flags defined in a file named after
// the program (ctxsel-server.cc, main.cc, ...), so ctxsel-server --help
// printed "No flags matched", and --version printed the build mode without
// a number; and absl::ParseCommandLine exits 1 on a misspelt flag or a bad
// value, which a systemd unit (RestartPreventExitStatus=2) restarts in a
// loop. So ctxsel's programs parse with:
//
//   ctxsel::SetFlagsUsage("ctxsel-server");
//   ctxsel::ParseFlagsOrExit(argc, argv);
//   // --help: every flag defined in ctxsel's own sources (not Abseil's);
//   // --version: "ctxsel-server 0.1.0"; both exit 0.
//   // --no_such_flag, --port=abc: Abseil's message, exit 2.
#ifndef CTXSEL_BASE_FLAGS_USAGE_H_
#define CTXSEL_BASE_FLAGS_USAGE_H_

#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel {

void SetFlagsUsage(absl::string_view program);

// The exit status of a usage error (an unknown flag, a bad flag value), as
// for ctxsel-cli (client/cli/command.h kExitBadInput) and every program
// that checks its flags after parsing.
inline constexpr int kExitUsage = 2;

// absl::ParseCommandLine(argc, argv), except that a usage error exits
// kExitUsage (not 1) after Abseil's message, and --help, --helpfull and
// --version exit 0 after printing. Returns the positional arguments
// (argv[0] first). Call once, before any thread starts.
std::vector<char*> ParseFlagsOrExit(int argc, char** argv);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_FLAGS_USAGE_H_
