// completion: bash, zsh and fish completion scripts built from the command
// table, so they offer exactly the commands and flags the parser accepts
// (FlagsOf). One list of words per command (CompletionWords), written out
// in each shell's syntax.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/cli/command.h"
#include "client/cli/commands.h"
#include "client/cli/text_fit.h"

namespace ctxsel::cli {
namespace {

// "--name" ("--name=" for a flag that takes a value is not known here:
// bash's nospace handling would need per-flag types).
std::vector<std::string> FlagWords(const std::vector<std::string>& names) {
  std::vector<std::string> words;
  for (const std::string& name : names) words.push_back("--" + name);
  return words;
}

// What completes where: before a command, the command names and the global
// flags; after one, its flags and the global ones.
struct CompletionWords {
  std::vector<std::string> first;  // no command yet
  // (command, words after it), in the table's order.
  std::vector<std::pair<std::string, std::vector<std::string>>> after;
};

CompletionWords Words() {
  const std::vector<std::string> global = FlagWords(std::vector<std::string>(
      std::begin(kGlobalFlags), std::end(kGlobalFlags)));
  CompletionWords words;
  words.first.push_back("help");
  for (const Command* command : AllCommands()) {
    words.first.push_back(command->name);
    std::vector<std::string> flags = FlagWords(FlagsOf(*command));
    flags.insert(flags.end(), global.begin(), global.end());
    words.after.emplace_back(command->name, std::move(flags));
  }
  words.first.insert(words.first.end(), global.begin(), global.end());
  return words;
}

// "<head><words joined by spaces><tail>\n", wrapped at kHelpWidth (inside
// bash's quotes and zsh's parentheses a newline separates words as a
// space does).
std::string WordList(absl::string_view head,
                     const std::vector<std::string>& words,
                     absl::string_view tail) {
  return absl::StrCat(
      WrapText(absl::StrCat(head, absl::StrJoin(words, " "), tail), kHelpWidth,
               6),
      "\n");
}

std::string BashScript() {
  const CompletionWords words = Words();
  std::string cases;
  for (const auto& [command, after] : words.after) {
    absl::StrAppend(
        &cases,
        WordList(absl::StrCat("    ", command, ") words=\""), after, "\" ;;"));
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
      "  case $command in\n",
      WordList("    '') words=\"", words.first, "\" ;;"), cases,
      "    *) words=\"\" ;;\n"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}\n"
      "complete -o default -F _ctxsel_cli ctxsel-cli\n");
}

std::string ZshScript() {
  const CompletionWords words = Words();
  std::string cases;
  for (const auto& [command, after] : words.after) {
    absl::StrAppend(
        &cases, WordList(absl::StrCat("    ", command, ") candidates=("), after,
                         ") ;;"));
  }
  return absl::StrCat(
      "#compdef ctxsel-cli\n"
      "# zsh completion for ctxsel-cli: source <(ctxsel-cli completion zsh)\n"
      "# (after compinit), or save as _ctxsel-cli in a directory of $fpath\n"
      "_ctxsel_cli() {\n"
      "  local command= i\n"
      "  local -a candidates\n"
      "  for ((i = 2; i < CURRENT; i++)); do\n"
      "    case ${words[i]} in -*) ;; *) command=${words[i]}; break ;; esac\n"
      "  done\n"
      "  case $command in\n",
      WordList("    '') candidates=(", words.first, ") ;;"), cases,
      "    *) candidates=() ;;\n"
      "  esac\n"
      "  compadd -a candidates || _files\n"
      "}\n"
      "compdef _ctxsel_cli ctxsel-cli\n");
}

// `text` in fish's single quotes.
std::string FishQuoted(absl::string_view text) {
  return absl::StrCat(
      "'", absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"'", "\\'"}}), "'");
}

std::string FishScript() {
  const CompletionWords words = Words();
  std::string out =
      "# fish completion for ctxsel-cli: ctxsel-cli completion fish | source\n"
      "# (or save as ~/.config/fish/completions/ctxsel-cli.fish)\n"
      "complete -c ctxsel-cli -f -n __fish_use_subcommand -a help "
      "-d 'Every command, or one'\n";
  for (const Command* command : AllCommands()) {
    absl::StrAppend(
        &out, "complete -c ctxsel-cli -f -n __fish_use_subcommand -a ",
        command->name, " \\\n    -d ", FishQuoted(command->summary), "\n");
  }
  for (const std::string& flag : words.first) {
    if (flag.rfind("--", 0) != 0) continue;
    absl::StrAppend(&out, "complete -c ctxsel-cli -n __fish_use_subcommand -l ",
                    flag.substr(2), "\n");
  }
  for (const auto& [command, after] : words.after) {
    for (const std::string& flag : after) {
      absl::StrAppend(&out,
                      "complete -c ctxsel-cli -n '__fish_seen_subcommand_from ",
                      command, "' -l ", flag.substr(2), "\n");
    }
  }
  return out;
}

int RunCompletion(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError(kCompletionCommand);
  std::string script;
  if (args[0] == "bash") {
    script = BashScript();
  } else if (args[0] == "zsh") {
    script = ZshScript();
  } else if (args[0] == "fish") {
    script = FishScript();
  } else {
    return UsageError(kCompletionCommand);
  }
  std::fputs(script.c_str(), stdout);
  return kExitOk;
}

}  // namespace

const Command kCompletionCommand = {
    "completion", "completion bash|zsh|fish",
    "A shell completion script: source <(ctxsel-cli completion bash|zsh); "
    "fish: ... | source.",
    RunCompletion};

}  // namespace ctxsel::cli
