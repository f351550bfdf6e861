// arguments.h: ctxsel-cli's command line, parsed the way kubectl and docker
// parse theirs, with the usage errors they give (exit 2, never absl's 1).
//
//   absl::StatusOr<Arguments> args = ParseArguments(argc, argv);
//   // "ctxsel-cli --server=h:1 select --kernel=saxpy -o json" is command
//   // "select", no positional arguments, --server, --kernel and --output
//   // set; "ctxsel-cli nodes ls --kernel=k" is INVALID_ARGUMENT
//   // "--kernel: not a flag of 'nodes' (ctxsel-cli nodes --help)".
//
// A command takes the global flags (kGlobalFlags) and the flags its usage
// lines name (FlagsOf): the usage text is the declaration, so help, the
// parser and bash completion cannot disagree. Flags are written --name=value,
// --name value, --name for a bool (--noname: false); '-' and '_' are the same
// in names (--no-headers). -h is --help and -o (or --o) is --output. "--" ends
// the flags: what follows is positional.
#ifndef CTXSEL_CLIENT_CLI_ARGUMENTS_H_
#define CTXSEL_CLIENT_CLI_ARGUMENTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli/command.h"

namespace ctxsel::cli {

struct Arguments {
  const Command* command = nullptr;  // null: none named
  // The first positional word when it names no command (an error unless
  // --help or --version is given).
  std::string unknown_command;
  std::vector<std::string> positional;  // after the command name
  bool help = false;                    // --help / -h
  bool version = false;                 // --version
};

// Parses argv into the absl flags and Arguments. INVALID_ARGUMENT naming the
// flag for an unknown flag, a flag the command does not take, a missing or
// bad value.
absl::StatusOr<Arguments> ParseArguments(int argc, const char* const* argv);

// `ctxsel-cli COMMAND --help`: the usage lines, the summary and each flag the
// command takes with its help text, wrapped at kHelpWidth (text_fit.h).
std::string CommandHelp(const Command& command);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_ARGUMENTS_H_
