#include "client/cli/command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ctxsel::cli {

std::string UsageText(const Command& command) {
  return absl::StrCat(
      "usage: ctxsel-cli ",
      absl::StrReplaceAll(command.usage, {{"\n", "\n       ctxsel-cli "}}),
      "\n");
}

int UsageError(const Command& command) {
  std::fputs(UsageText(command).c_str(), stderr);
  return kExitBadInput;
}

}  // namespace ctxsel::cli
