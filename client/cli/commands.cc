// The command table: one line per subcommand.
#include "client/cli/command.h"

namespace ctxsel::cli {

int RunPing(const std::vector<std::string>& args);
int RunEval(const std::vector<std::string>& args);
int RunVariants(const std::vector<std::string>& args);
int RunNodes(const std::vector<std::string>& args);
int RunDevices(const std::vector<std::string>& args);
int RunWatch(const std::vector<std::string>& args);
int RunSelect(const std::vector<std::string>& args);
int RunExplain(const std::vector<std::string>& args);
int RunImport(const std::vector<std::string>& args);
int RunArchs(const std::vector<std::string>& args);

namespace {

constexpr Command kCommands[] = {
    {"ping", "ping", "Check that the server answers.", RunPing},
    {"eval", "eval [FILE|-] [NAME=SELECTOR...]",
     "Evaluate selectors offline (no server).", RunEval},
    {"variants", "variants register|ls|get|rm KERNEL [NAME=SELECTOR...]",
     "Manage registered variants (--variants_file, --replace).", RunVariants},
    {"nodes", "nodes ls", "List the live nodes.", RunNodes},
    {"devices", "devices ls [--match=SELECTOR] [--node=N]",
     "List live devices, optionally matching a selector.", RunDevices},
    {"watch", "watch [--initial] [--max_events=N]", "Stream inventory changes.",
     RunWatch},
    {"select", "select --kernel=K [--construct=..] [--var=N=4096]",
     "Pick variant, node and device (--format=table|json|env).", RunSelect},
    {"explain", "explain --kernel=K [--construct=..] [--var=..]",
     "Show the per-class, per-variant breakdown.", RunExplain},
    {"import", "import FILE...",
     "Variants declared in C/C++/Fortran sources, as JSON.", RunImport},
    {"archs", "archs [NAME]", "SYCL architecture catalog (--json).", RunArchs},
};

}  // namespace

absl::Span<const Command> AllCommands() { return kCommands; }

}  // namespace ctxsel::cli
