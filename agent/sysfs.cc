#include "agent/sysfs.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace ctxsel::agent {
namespace {

// Splits "card10" into ("card", 10) so lists sort as people expect.
std::pair<std::string, long> NaturalKey(const std::string& name) {
  size_t digits = name.find_last_not_of("0123456789") + 1;
  if (digits == name.size()) return {name, -1};
  return {name.substr(0, digits),
          std::strtol(name.c_str() + digits, nullptr, 10)};
}

}  // namespace

absl::StatusOr<int64_t> ParseSysfsInt(const std::string& text) {
  std::string s(absl::StripAsciiWhitespace(text));
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(s.c_str(), &end, 0);
  if (s.empty() || errno != 0 || *end != '\0') {
    return absl::InvalidArgumentError(
        absl::StrCat("not an integer: '", s, "'"));
  }
  return static_cast<int64_t>(value);
}

std::string Sysfs::Full(const std::string& path) const {
  return (std::filesystem::path(root_) / "sys" / path).string();
}

bool Sysfs::Exists(const std::string& path) const {
  std::error_code ec;
  return std::filesystem::exists(Full(path), ec);
}

absl::StatusOr<std::string> Sysfs::Read(const std::string& path) const {
  std::ifstream in(Full(path));
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", Full(path)));
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

absl::StatusOr<int64_t> Sysfs::ReadInt(const std::string& path) const {
  CTXSEL_ASSIGN_OR_RETURN(std::string text, Read(path));
  absl::StatusOr<int64_t> value = ParseSysfsInt(text);
  if (!value.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Full(path), ": ", value.status().message()));
  }
  return value;
}

std::vector<std::string> Sysfs::List(const std::string& path) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(Full(path), ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
    return NaturalKey(a) < NaturalKey(b);
  });
  return names;
}

absl::StatusOr<std::map<std::string, int64_t>> Sysfs::ReadProperties(
    const std::string& path) const {
  CTXSEL_ASSIGN_OR_RETURN(std::string text, Read(path));
  std::map<std::string, int64_t> properties;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    std::vector<absl::string_view> words =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.empty()) continue;
    int64_t value = 0;
    if (words.size() != 2 || !absl::SimpleAtoi(words[1], &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Full(path), ":", line_number,
                       ": expected 'key integer', got '", line, "'"));
    }
    properties[std::string(words[0])] = value;
  }
  return properties;
}

}  // namespace ctxsel::agent
