// command.h: what a ctxsel-cli subcommand is, and the exit codes they share.
//
// Each subcommand lives in its own <name>_command.cc, which defines one
// `Command` (declared here through commands.def) and uses these exit codes:
//
//   int RunNodes(const std::vector<std::string>& args) {
//     if (args.empty()) return UsageError(kNodesCommand);
//     ...
//     return kExitOk;
//   }
//   const Command kNodesCommand = {"nodes", "nodes ls [--json]",
//                                  "List the live nodes.", RunNodes};
#ifndef CTXSEL_CLIENT_CLI_COMMAND_H_
#define CTXSEL_CLIENT_CLI_COMMAND_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel::cli {

// Exit codes of every command, by what the caller should do: the one table
// (`ctxsel-cli help` prints it, docs/launchers.md explains it). ExitCodeOf
// (service_output.h) maps a server's status to them.
//
// 0 placed (done); run it.
inline constexpr int kExitOk = 0;
// 1 no placement possible: nothing fits (FAILED_PRECONDITION, NOT_FOUND of
// a node the job names); wait, or run elsewhere.
inline constexpr int kExitFailure = 1;
// 2 usage or bad input (INVALID_ARGUMENT, an unknown kernel, a bad flag or
// allocation variable, a request past a server limit: LIMIT_EXCEEDED); fix
// the command, retrying will not help.
inline constexpr int kExitBadInput = 2;
// 3 transient: the server did not answer (UNAVAILABLE, DEADLINE_EXCEEDED),
// a rate limit or busy server (RESOURCE_EXHAUSTED with reason RATE_LIMITED
// or SERVER_BUSY), ABORTED; retry with backoff.
inline constexpr int kExitUnreachable = 3;
// 4 every fitting device is claimed (CLAIMS_EXHAUSTED), after any --wait;
// wait for a claim to end, or run elsewhere.
inline constexpr int kExitExhausted = 4;
// 5 credentials or TLS rejected (UNAUTHENTICATED, PERMISSION_DENIED, a
// failed TLS handshake); fix the flag or variable the message names, do not
// retry.
inline constexpr int kExitCredentials = 5;

// The table above as `ctxsel-cli help` prints it.
inline constexpr char kExitCodesHelp[] =
    "exit codes (what the caller should do):\n"
    "  0  placed: run the job\n"
    "  1  no placement possible, nothing fits: wait or run elsewhere\n"
    "  2  usage or bad input: fix the command; retrying will not help\n"
    "  3  transient (unreachable, deadline, rate limit): retry with backoff\n"
    "  4  every fitting device is claimed: wait for one, or run elsewhere\n"
    "  5  credentials or TLS rejected: fix the flag the message names\n";

struct Command {
  const char* name;
  // One line per form, '\n'-separated, e.g. "archs [--json] [NAME]". The
  // --flags it names are the flags the command takes (FlagsOf) besides the
  // global ones; the parser rejects any other with exit 2.
  const char* usage;
  const char* summary;  // One line for `ctxsel-cli help`.
  // `args` are the positional arguments after the command name; flags are
  // already parsed into absl flags (ParseArguments, arguments.h). Returns the
  // process exit code.
  int (*run)(const std::vector<std::string>& args);
};

// The command objects, one per line of commands.def (kPingCommand, ...).
#define CTXSEL_CLI_COMMAND(Name) extern const Command k##Name##Command;
#include "client/cli/commands.def"

// The flags every command takes (help names them on its first lines).
inline constexpr absl::string_view kGlobalFlags[] = {
    "server",  "timeout", "output",   "json",     "no_headers", "help",
    "version", "ca",      "insecure", "tls_cert", "tls_key",    "token_file"};

// The names of the --flags that `text` names ('-' read as '_'), in order,
// once each; a bare "--" (the end of the flags) is none.
std::vector<std::string> FlagsIn(absl::string_view text);

// FlagsIn(command.usage): the flags the command takes besides kGlobalFlags.
std::vector<std::string> FlagsOf(const Command& command);

// "usage: <usage lines>" for `command`, ready to print, each wrapped at
// kHelpWidth (text_fit.h).
std::string UsageText(const Command& command);

// Prints UsageText(command) to stderr; returns kExitBadInput.
int UsageError(const Command& command);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_COMMAND_H_
