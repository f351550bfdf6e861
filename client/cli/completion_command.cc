// completion: a bash completion script built from the command table, so it
// offers exactly the commands and flags the parser accepts (FlagsOf).
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command.h"
#include "client/cli/commands.h"

namespace ctxsel::cli {
namespace {

// "--name" ("--name=" for a flag that takes a value is not known here:
// bash's nospace handling would need per-flag types).
std::string FlagWords(const std::vector<std::string>& names) {
  std::vector<std::string> words;
  for (const std::string& name : names) words.push_back("--" + name);
  return absl::StrJoin(words, " ");
}

std::string BashScript() {
  std::vector<std::string> names = {"help"};
  std::string cases;
  std::vector<std::string> global(std::begin(kGlobalFlags),
                                  std::end(kGlobalFlags));
  for (const Command* command : AllCommands()) {
    names.push_back(command->name);
    std::vector<std::string> flags = FlagsOf(*command);
    flags.insert(flags.end(), global.begin(), global.end());
    absl::StrAppend(&cases, "    ", command->name, ") words=\"",
                    FlagWords(flags), "\" ;;\n");
  }
  return absl::StrCat(
      "# bash completion for ctxsel-cli: source <(ctxsel-cli completion "
      "bash)\n"
      "_ctxsel_cli() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} command= words i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in -*) ;; *) command=${COMP_WORDS[i]}; "
      "break ;; esac\n"
      "  done\n"
      "  case $command in\n"
      "    '') words=\"",
      absl::StrJoin(names, " "), " ", FlagWords(global), "\" ;;\n", cases,
      "    *) words=\"\" ;;\n"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}\n"
      "complete -o default -F _ctxsel_cli ctxsel-cli\n");
}

int RunCompletion(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "bash") {
    return UsageError(kCompletionCommand);
  }
  std::fputs(BashScript().c_str(), stdout);
  return kExitOk;
}

}  // namespace

const Command kCompletionCommand = {
    "completion", "completion bash",
    "Print a bash completion script: source <(ctxsel-cli completion bash).",
    RunCompletion};

}  // namespace ctxsel::cli
