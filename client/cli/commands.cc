#include "client/cli/commands.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/server_target.h"
#include "client/cli/common_flags.h"
#include "client/cli/text_fit.h"

namespace ctxsel::cli {
namespace {

constexpr const Command* kCommands[] = {
#define CTXSEL_CLI_COMMAND(Name) &k##Name##Command,
#include "client/cli/commands.def"
};

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
    // Usage lines indented by two, continued at five; the summary by four.
    for (absl::string_view line : absl::StrSplit(command->usage, '\n')) {
      absl::StrAppend(&out, WrapText(absl::StrCat("  ", line), kHelpWidth, 3),
                      "\n");
    }
    absl::StrAppend(
        &out, WrapText(absl::StrCat("    ", command->summary), kHelpWidth, 2),
        "\n");
  }
  absl::StrAppend(&out, "\n", kExitCodesHelp);
  return out;
}

}  // namespace ctxsel::cli
