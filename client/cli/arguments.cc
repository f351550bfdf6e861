#include "client/cli/arguments.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "client/cli/commands.h"
#include "client/cli/text_fit.h"

namespace ctxsel::cli {
namespace {

bool IsGlobal(absl::string_view name) {
  return std::find(std::begin(kGlobalFlags), std::end(kGlobalFlags), name) !=
         std::end(kGlobalFlags);
}

bool Takes(const Command* command, const std::string& name) {
  if (IsGlobal(name)) return true;
  if (command == nullptr) return false;
  const std::vector<std::string> flags = FlagsOf(*command);
  return std::find(flags.begin(), flags.end(), name) != flags.end();
}

const Command* FindCommand(absl::string_view name) {
  for (const Command* command : AllCommands()) {
    if (name == command->name) return command;
  }
  return nullptr;
}

// One flag as written, before it is checked against the command.
struct FlagWord {
  std::string name;  // as absl knows it: '_' for '-', -h/-o expanded
  std::string value;
};

}  // namespace

absl::StatusOr<Arguments> ParseArguments(int argc, const char* const* argv) {
  Arguments out;
  std::vector<FlagWord> words;
  bool named = false;  // the first positional word (the command) was seen
  auto positional = [&](std::string word) {
    if (named) {
      out.positional.push_back(std::move(word));
      return;
    }
    named = true;
    out.command = FindCommand(word);
    if (out.command == nullptr) out.unknown_command = std::move(word);
  };
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) positional(argv[i]);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional(std::string(arg));
      continue;
    }
    const bool single_dash = arg[1] != '-';
    absl::string_view body = arg.substr(single_dash ? 1 : 2);
    const size_t eq = body.find('=');
    std::string name = absl::StrReplaceAll(body.substr(0, eq), {{"-", "_"}});
    const bool has_value = eq != absl::string_view::npos;
    std::string value = has_value ? std::string(body.substr(eq + 1)) : "";
    if (single_dash && name == "h") name = "help";
    if (single_dash && name != "o" && name[0] == 'o' && !has_value &&
        absl::FindCommandLineFlag(name) == nullptr) {
      value = name.substr(1);  // -ojson
      name = "output";
    } else if (name == "o") {  // -o json, --o=json
      name = "output";
    }
    if (name == "help" || name == "version") {
      (name == "help" ? out.help : out.version) = true;
      continue;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* positive =
          absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && positive->IsOfType<bool>()) {
        flag = positive;
        name = name.substr(2);
        negated = true;
      }
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(arg.substr(0, arg.find('=')),
                       ": unknown flag (ctxsel-cli help lists them)"));
    }
    if (flag->IsOfType<bool>()) {
      if (negated && has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("--no", name, ": takes no value"));
      }
      if (!has_value) value = negated ? "false" : "true";
    } else if (!has_value && value.empty()) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": needs a value"));
      }
      value = argv[++i];
    }
    words.push_back({std::move(name), std::move(value)});
  }
  for (const FlagWord& word : words) {
    if (!Takes(out.command, word.name)) {
      return absl::InvalidArgumentError(
          out.command == nullptr
              ? absl::StrCat("--", word.name,
                             ": not a global flag (no command is named)")
              : absl::StrCat("--", word.name, ": not a flag of '",
                             out.command->name, "' (ctxsel-cli ",
                             out.command->name, " --help)"));
    }
    std::string error;
    if (!absl::FindCommandLineFlag(word.name)->ParseFrom(word.value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", word.name, ": ", error));
    }
  }
  return out;
}

std::string CommandHelp(const Command& command) {
  std::string out =
      absl::StrCat(UsageText(command), "\n",
                   WrapText(command.summary, kHelpWidth, 2), "\n\nflags:\n");
  for (const std::string& name : FlagsOf(command)) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;  // commands_test checks there is none
    std::string line = absl::StrCat("  --", name, "  ", flag->Help());
    if (!flag->DefaultValue().empty() && flag->DefaultValue() != "false") {
      absl::StrAppend(&line, " (default: ", flag->DefaultValue(), ")");
    }
    absl::StrAppend(&out, WrapText(line, kHelpWidth, 4), "\n");
  }
  absl::StrAppend(
      &out,
      WrapText("global flags (ctxsel-cli help): --server --timeout "
               "-o/--output --json --no-headers -h/--help --version",
               kHelpWidth, 4),
      "\n");
  return out;
}

}  // namespace ctxsel::cli
