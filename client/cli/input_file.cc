#include "client/cli/input_file.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ctxsel::cli {

absl::StatusOr<std::string> ReadInputFile(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  text << in.rdbuf();
  return text.str();
}

}  // namespace ctxsel::cli
