#include "client/cli/commands.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/server_target.h"
#include "client/cli/common_flags.h"

namespace ctxsel::cli {
namespace {

constexpr const Command* kCommands[] = {
#define CTXSEL_CLI_COMMAND(Name) &k##Name##Command,
#include "client/cli/commands.def"
};

// `line` indented by two, broken at spaces before column 80; continuation
// lines are indented by six.
std::string Wrapped(absl::string_view line) {
  constexpr size_t kWidth = 79;
  std::string out = "  ";
  size_t column = out.size();
  for (absl::string_view word : absl::StrSplit(line, ' ')) {
    if (column > 2 && column + 1 + word.size() > kWidth) {
      out += "\n     ";
      column = 5;
    }
    if (column > 2) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
  }
  return out + "\n";
}

}  // namespace

absl::Span<const Command* const> AllCommands() { return kCommands; }

std::string HelpText() {
  std::string out = absl::StrCat(
      "usage: ctxsel-cli [--server=host:port] [--timeout=5s]\n"
      "                  [-o|--output=table|wide|json|yaml|name] [--json]\n"
      "                  [--no-headers] [--ca=CA.pem] [--token_file=FILE]\n"
      "                  [--insecure] [--tls_cert=PEM --tls_key=PEM]\n"
      "                  <command> [args...] [-h|--help]\n"
      "       ctxsel-cli --version | help [COMMAND]\n"
      "--server defaults to $CTXSEL_SERVER, else ",
      kDefaultServer,
      ";\n--timeout is the deadline of each call to the server (exit 3 when "
      "passed);\n-o json and -o yaml print the result message (--json is -o "
      "json),\n"
      "-o name one name per line; usage errors exit 2 (exit codes below);\n"
      "--ca defaults to $CTXSEL_CA, --token_file to $CTXSEL_TOKEN_FILE; calls "
      "use TLS\nunless --insecure (docs/security.md)\n\ncommands:\n");
  for (const Command* command : kCommands) {
    for (absl::string_view line : absl::StrSplit(command->usage, '\n')) {
      absl::StrAppend(&out, Wrapped(line));
    }
    absl::StrAppend(&out, "    ", command->summary, "\n");
  }
  absl::StrAppend(&out, "\n", kExitCodesHelp);
  return out;
}

}  // namespace ctxsel::cli
