// The command table: one line per subcommand.
#include "client/cli/command.h"

namespace ctxsel::cli {

int RunPing(const std::vector<std::string>& args);
int RunEval(const std::vector<std::string>& args);

namespace {

constexpr Command kCommands[] = {
    {"ping", "ping", "Check that the server answers.", RunPing},
    {"eval", "eval [FILE|-] [NAME=SELECTOR...]",
     "Evaluate selectors offline (no server).", RunEval},
};

}  // namespace

absl::Span<const Command> AllCommands() { return kCommands; }

}  // namespace ctxsel::cli
