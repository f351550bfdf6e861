// ctxsel-cli: the command-line client. `ctxsel-cli help` lists the commands.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/cli/commands.h"
#include "client/cli/common_flags.h"
#include "client/credentials.h"

int main(int argc, char** argv) {
  namespace cli = ::ctxsel::cli;
  absl::SetProgramUsageMessage("ctxsel-cli <command> [args...]; see 'help'.");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() >= 2 && std::strcmp(positional[1], "help") == 0) {
    std::fputs(cli::HelpText().c_str(), stdout);
    return cli::kExitOk;
  }
  if (positional.size() < 2) {
    std::fputs(cli::HelpText().c_str(), stderr);
    return cli::kExitBadInput;
  }
  if (absl::Status timeout = cli::CallTimeoutFromFlags().status();
      !timeout.ok()) {
    std::fprintf(stderr, "ctxsel-cli: %s\n",
                 std::string(timeout.message()).c_str());
    return cli::kExitBadInput;
  }
  // Bad security flags (an unreadable --ca, a token with --insecure) are
  // reported once, before any command runs.
  if (absl::Status credentials = ctxsel::client::MakeChannelCredentials(
                                     ctxsel::client::ClientSecurityFromFlags())
                                     .status();
      !credentials.ok()) {
    std::fprintf(stderr, "ctxsel-cli: %s\n",
                 std::string(credentials.message()).c_str());
    return cli::kExitBadInput;
  }
  const std::string name = positional[1];
  for (const cli::Command* command : cli::AllCommands()) {
    if (name == command->name) {
      return command->run({positional.begin() + 2, positional.end()});
    }
  }
  std::fprintf(stderr, "ctxsel-cli: unknown command '%s'\n", name.c_str());
  std::fputs(cli::HelpText().c_str(), stderr);
  return cli::kExitBadInput;
}
