#include "client/cli/command.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "client/cli/text_fit.h"

namespace ctxsel::cli {

std::string UsageText(const Command& command) {
  // "usage: ctxsel-cli FORM" per form, each wrapped at kHelpWidth with its
  // continuation lines indented past "usage: " (not under the form's first
  // word: the longest flag, 65 columns, fits after 11).
  constexpr absl::string_view kProgram = "ctxsel-cli ";
  constexpr absl::string_view kFirst = "usage: ";
  std::string out;
  for (absl::string_view form : absl::StrSplit(command.usage, '\n')) {
    const std::string line = absl::StrCat(
        out.empty() ? kFirst : std::string(kFirst.size(), ' '), kProgram, form);
    // Later forms are indented by kFirst already.
    const size_t hang = out.empty() ? kFirst.size() + 4 : 4;
    absl::StrAppend(&out, WrapText(line, kHelpWidth, hang), "\n");
  }
  return out;
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
