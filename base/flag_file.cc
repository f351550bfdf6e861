#include "base/flag_file.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ctxsel {

absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag,
                                         const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  if (!in || !(text << in.rdbuf())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read ", path));
  }
  return text.str();
}

}  // namespace ctxsel
