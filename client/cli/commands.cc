// The command table: one line per subcommand.
#include "client/cli/command.h"

namespace ctxsel::cli {

int RunPing(const std::vector<std::string>& args);

namespace {

constexpr Command kCommands[] = {
    {"ping", "ping", "Check that the server answers.", RunPing},
};

}  // namespace

absl::Span<const Command> AllCommands() { return kCommands; }

}  // namespace ctxsel::cli
