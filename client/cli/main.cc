// ctxsel-cli: the command-line client. `ctxsel-cli help` lists the commands;
// `ctxsel-cli COMMAND --help` shows one. Usage errors exit 2 (kExitBadInput),
// never 1, which a launcher reads as "no placement".
#include <cstdio>
#include <string>

#include "base/channel_credentials.h"
#include "base/version.h"
#include "client/cli/arguments.h"
#include "client/cli/commands.h"
#include "client/cli/common_flags.h"

int main(int argc, char** argv) {
  namespace cli = ::ctxsel::cli;
  absl::StatusOr<cli::Arguments> args = cli::ParseArguments(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "ctxsel-cli: %s\n",
                 std::string(args.status().message()).c_str());
    return cli::kExitBadInput;
  }
  if (args->version) {
    std::printf("ctxsel-cli %s\n", ::ctxsel::kVersion);
    return cli::kExitOk;
  }
  // `help`, `help COMMAND`, `COMMAND --help`.
  const bool help_command = args->unknown_command == "help";
  if (args->help || help_command) {
    const cli::Command* command = args->command;
    if (help_command && !args->positional.empty()) {
      for (const cli::Command* c : cli::AllCommands()) {
        if (args->positional[0] == c->name) command = c;
      }
      if (command == nullptr) {
        std::fprintf(stderr, "ctxsel-cli: unknown command '%s'\n",
                     args->positional[0].c_str());
        return cli::kExitBadInput;
      }
    }
    std::fputs(command != nullptr ? cli::CommandHelp(*command).c_str()
                                  : cli::HelpText().c_str(),
               stdout);
    return cli::kExitOk;
  }
  if (args->command == nullptr) {
    if (!args->unknown_command.empty()) {
      std::fprintf(stderr, "ctxsel-cli: unknown command '%s'\n",
                   args->unknown_command.c_str());
    }
    std::fputs(cli::HelpText().c_str(), stderr);
    return cli::kExitBadInput;
  }
  for (absl::Status flags : {cli::CallTimeoutFromFlags().status(),
                             cli::OutputFormatFromFlags().status()}) {
    if (!flags.ok()) {
      std::fprintf(stderr, "ctxsel-cli: %s\n",
                   std::string(flags.message()).c_str());
      return cli::kExitBadInput;
    }
  }
  // Bad security flags (an unreadable --ca, a token with --insecure) are
  // reported once, before any command runs.
  if (absl::Status credentials =
          ctxsel::MakeChannelCredentials(ctxsel::cli::ClientSecurityFromFlags())
              .status();
      !credentials.ok()) {
    std::fprintf(stderr, "ctxsel-cli: %s\n",
                 std::string(credentials.message()).c_str());
    return cli::kExitBadInput;
  }
  return args->command->run(args->positional);
}
