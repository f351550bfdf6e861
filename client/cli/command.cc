#include "client/cli/command.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ctxsel::cli {

std::string UsageText(const Command& command) {
  return absl::StrCat(
      "usage: ctxsel-cli ",
      absl::StrReplaceAll(command.usage, {{"\n", "\n       ctxsel-cli "}}),
      "\n");
}

std::vector<std::string> FlagsIn(absl::string_view text) {
  std::vector<std::string> out;
  for (size_t at = text.find("--"); at != absl::string_view::npos;
       at = text.find("--", at + 2)) {
    size_t end = at + 2;
    while (end < text.size() && (absl::ascii_isalnum(text[end]) ||
                                 text[end] == '_' || text[end] == '-')) {
      ++end;
    }
    std::string name =
        absl::StrReplaceAll(text.substr(at + 2, end - at - 2), {{"-", "_"}});
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(std::move(name));
    }
    at = end - 2;
  }
  return out;
}

std::vector<std::string> FlagsOf(const Command& command) {
  return FlagsIn(command.usage);
}

int UsageError(const Command& command) {
  std::fputs(UsageText(command).c_str(), stderr);
  return kExitBadInput;
}

}  // namespace ctxsel::cli
