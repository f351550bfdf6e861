// The subcommands of ctxsel-cli. Each lives in its own <name>_command.cc and
// is listed once in commands.cc.
//
//   ctxsel-cli [--server=host:port] <command> [args...]
#ifndef CTXSEL_CLIENT_CLI_COMMAND_H_
#define CTXSEL_CLIENT_CLI_COMMAND_H_

#include <string>
#include <vector>

#include "absl/types/span.h"

namespace ctxsel::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // The server or the operation failed.
inline constexpr int kExitBadInput = 2;    // Invalid arguments or input files.

struct Command {
  const char* name;
  const char* usage;    // e.g. "ping" or "eval --variants=FILE ..."
  const char* summary;  // One line for `ctxsel-cli help`.
  // `args` are the positional arguments after the command name; flags are
  // already parsed into absl flags. Returns the process exit code.
  int (*run)(const std::vector<std::string>& args);
};

// All commands, in the order `help` lists them.
absl::Span<const Command> AllCommands();

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_COMMAND_H_
