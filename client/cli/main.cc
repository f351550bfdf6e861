// ctxsel-cli: the command-line client. `ctxsel-cli help` lists the commands.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/cli/command.h"

namespace {

void PrintHelp(FILE* out) {
  std::fprintf(out,
               "usage: ctxsel-cli [--server=host:port] [--json] <command> "
               "[args...]\n\ncommands:\n");
  for (const ctxsel::cli::Command& command : ctxsel::cli::AllCommands()) {
    std::fprintf(out, "  %-44s %s\n", command.usage, command.summary);
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("ctxsel-cli <command> [args...]; see 'help'.");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() < 2 || std::strcmp(positional[1], "help") == 0) {
    PrintHelp(positional.size() < 2 ? stderr : stdout);
    return positional.size() < 2 ? ctxsel::cli::kExitBadInput
                                 : ctxsel::cli::kExitOk;
  }
  const std::string name = positional[1];
  for (const ctxsel::cli::Command& command : ctxsel::cli::AllCommands()) {
    if (name == command.name) {
      return command.run({positional.begin() + 2, positional.end()});
    }
  }
  std::fprintf(stderr, "ctxsel-cli: unknown command '%s'\n", name.c_str());
  PrintHelp(stderr);
  return ctxsel::cli::kExitBadInput;
}
