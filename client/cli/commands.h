// commands.h: the table of ctxsel-cli subcommands (commands.def) and the
// help text built from it.
//
//   for (const Command* c : AllCommands()) {
//     if (name == c->name) return c->run(args);
//   }
//   std::fputs(HelpText().c_str(), stderr);
#ifndef CTXSEL_CLIENT_CLI_COMMANDS_H_
#define CTXSEL_CLIENT_CLI_COMMANDS_H_

#include <string>

#include "absl/types/span.h"
#include "client/cli/command.h"

namespace ctxsel::cli {

// All commands, in the order of commands.def.
absl::Span<const Command* const> AllCommands();

// `ctxsel-cli help`: the global flags, then each command's usage lines and
// summary.
std::string HelpText();

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_COMMANDS_H_
